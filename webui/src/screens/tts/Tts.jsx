import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useConfig } from "../../config.jsx";
import { canPayTts } from "../../lib/payButton.js";
import { blankText, countChars, priceCents } from "../../lib/pricing.js";
import { parseSpeed } from "../../lib/speed.js";
import { useSpeechQuote } from "../../lib/speechQuote.js";
import { voiceName } from "../../lib/voices.js";
import { readJSON, TTS_KEY, writeJSON } from "../../lib/storage.js";
import ServiceClosed from "../closed/ServiceClosed.jsx";
import EmailStep from "../order/EmailStep.jsx";
import FormatStep from "../order/FormatStep.jsx";
import PaidNotice from "../order/PaidNotice.jsx";
import PayStep from "../order/PayStep.jsx";
import { useOrder } from "../order/useOrder.js";
import TextStep from "./TextStep.jsx";
import Preview from "./Preview.jsx";
import VoiceStep from "./VoiceStep.jsx";

/**
 * The form as the visitor left it (saved as they type, so that a reload or a cancelled
 * checkout loses nothing), checked against the config.
 */
function restore(tts) {
  const saved = readJSON(TTS_KEY) || {};
  const voice = tts.voices.includes(saved.activeVoice) ? saved.activeVoice : tts.defaultVoice;
  const outputFormat = tts.formats.includes(saved.outputFormat) ? saved.outputFormat : tts.defaultFormat;
  const speed = Number.isFinite(saved.speed) ? parseSpeed(saved.speed, tts.speed) : tts.speed.default;
  const email = typeof saved.email === "string" ? saved.email : "";
  const text = typeof saved.ttsText === "string" ? saved.ttsText : "";
  const language = (tts.languages || []).includes(saved.language) ? saved.language : "";
  return { voice, outputFormat, speed, email, text, language };
}

/** The text-to-speech page: the spec's five numbered steps. */
export default function Tts() {
  const config = useConfig();
  const { t, i18n } = useTranslation();
  const tts = config.tts;
  const initial = useMemo(() => restore(tts), [tts]);
  const [voice, setVoice] = useState(initial.voice);
  const [speed, setSpeed] = useState(initial.speed);
  const [text, setText] = useState(initial.text);
  const order = useOrder("tts", initial);
  // language "": detect
  const { format, setFormat, email, setEmail, emailVerify, setEmailVerify, language, setLanguage, paying, paid, startNew, open, locale, money } = order;
  useEffect(() => {
    if (open) writeJSON(TTS_KEY, { activeVoice: voice, ttsText: text, speed, email, outputFormat: format, ...(language && { language }) });
  }, [open, voice, text, speed, email, format, language]);
  const languages = tts.languages || [];
  const quote = useSpeechQuote({ text, language, locale: i18n.language, enabled: languages.length > 0 });
  // Marks when the form is on screen and usable (read by the browser test as time to interactive).
  useEffect(() => {
    performance.mark?.("parla:tts-interactive");
  }, []);

  if (!open) return <ServiceClosed service="tts" reason={config.services.tts.reason} />;

  const chars = countChars(text);
  // Only white space: the server would refuse it (empty_text), so it has no price.
  const blank = chars > 0 && blankText(text);
  const costCents = blank ? 0 : priceCents(chars, tts.price);
  const payable = canPayTts({ costCents, chars, maxChars: tts.maxChars, blank, email, emailVerify }) && !quote?.error && !paid;

  const pay = () => order.pay({ voice, input: text, format, speed }, costCents, { description: t("tts.productDescription", { n: chars, voice: voiceName(voice), format }) });

  return (
    <article className="tts">
      <h1>{t("tts.title")}</h1>
      <p className="lead">{t("tts.subtitle")}</p>
      {paid && <PaidNotice order={paid} onNew={startNew} />}
      <ol className="steps">
        <VoiceStep
          voices={tts.voices}
          voice={voice}
          onVoice={setVoice}
          speed={speed}
          onSpeed={setSpeed}
          speedRange={tts.speed}
        />
        <TextStep
          text={text}
          onText={setText}
          chars={chars}
          blank={blank}
          costText={money(costCents)}
          price={tts.price}
          money={money}
          maxChars={tts.maxChars}
          locale={locale}
          languages={languages}
          readers={tts.engines}
          language={language}
          onLanguage={setLanguage}
          quote={quote}
        />
        <FormatStep n={3} title={t("tts.step3")} formats={tts.formats} format={format} onFormat={setFormat} describe="tts.formats">
          <Preview
            text={text}
            voice={voice}
            speed={speed}
            format={format}
            language={language}
            locale={i18n.language}
            disabled={chars === 0 || blank || (tts.maxChars > 0 && chars > tts.maxChars) || !!quote?.error}
          />
        </FormatStep>
        <EmailStep n={4} title={t("tts.step4")} email={email} emailVerify={emailVerify} onEmail={setEmail} onEmailVerify={setEmailVerify} />
        <PayStep
          n={5}
          title={t("tts.step5")}
          payable={payable}
          info={[t("tts.payInfo", { price: money(costCents) })]}
          button={t("tts.pay", { price: money(costCents) })}
          prompt={paid ? t("order.alreadyPaid") : t("tts.prompt")}
          testMode={order.testMode}
          paying={paying}
          onPay={pay}
        />
      </ol>
    </article>
  );
}
