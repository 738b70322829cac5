import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useConfig } from "../../config.jsx";
import { languageById } from "../../languages.js";
import { checkout, lineItem } from "../../lib/checkout.js";
import { canPayTts } from "../../lib/payButton.js";
import { countChars, formatMoney, priceCents } from "../../lib/pricing.js";
import { parseSpeed } from "../../lib/speed.js";
import { useSpeechQuote } from "../../lib/speechQuote.js";
import { voiceName } from "../../lib/voices.js";
import { readJSON, TTS_KEY, writeJSON } from "../../lib/storage.js";
import ServiceClosed from "../closed/ServiceClosed.jsx";
import EmailStep from "../order/EmailStep.jsx";
import FormatStep from "../order/FormatStep.jsx";
import PaidNotice from "../order/PaidNotice.jsx";
import PayStep from "../order/PayStep.jsx";
import { usePaidOrder } from "../order/usePaidOrder.js";
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
  const format = tts.formats.includes(saved.outputFormat) ? saved.outputFormat : tts.defaultFormat;
  const speed = Number.isFinite(saved.speed) ? parseSpeed(saved.speed, tts.speed) : tts.speed.default;
  const email = typeof saved.email === "string" ? saved.email : "";
  const text = typeof saved.ttsText === "string" ? saved.ttsText : "";
  const language = (tts.languages || []).includes(saved.language) ? saved.language : "";
  return { voice, format, speed, email, emailVerify: email, text, language };
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
  const [format, setFormat] = useState(initial.format);
  const [email, setEmail] = useState(initial.email);
  const [emailVerify, setEmailVerify] = useState(initial.emailVerify);
  const [language, setLanguage] = useState(initial.language); // "": detect
  const [paying, setPaying] = useState(false);
  const { paid, setPaid, startNew, keyOf } = usePaidOrder("tts");
  const open = config.services?.tts?.open !== false;
  useEffect(() => {
    if (open) writeJSON(TTS_KEY, { activeVoice: voice, ttsText: text, speed, email, outputFormat: format, ...(language && { language }) });
  }, [open, voice, text, speed, email, format, language]);
  const languages = tts.languages || [];
  const quote = useSpeechQuote({ text, language, locale: i18n.language, enabled: languages.length > 0 });
  // Marks when the form is on screen and usable (read by the browser test as time to interactive).
  useEffect(() => {
    performance.mark?.("parla:tts-interactive");
  }, []);

  const service = config.services?.tts;
  if (service && service.open === false) return <ServiceClosed service="tts" reason={service.reason} />;

  const locale = languageById(i18n.language).tag;
  const chars = countChars(text);
  const costCents = priceCents(chars, tts.price);
  const money = (cents) => formatMoney(cents, config.currency, locale);
  const payable = canPayTts({ costCents, chars, maxChars: tts.maxChars, email, emailVerify }) && !quote?.error && !paid;

  async function pay() {
    setPaying(true);
    const left = await checkout(
      "tts",
      {
        order: { voice, input: text, format, speed, email, emailVerify, locale: i18n.language, ...(language && { language }) },
        products: [
          lineItem({
            currency: config.currency,
            amount: costCents,
            name: t("tts.productName"),
            description: t("tts.productDescription", { n: chars, voice: voiceName(voice), format }),
          }),
        ],
      },
      config.payment,
      { onAlreadyPaid: setPaid, key: keyOf() },
    );
    if (!left) setPaying(false);
  }

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
          costText={money(costCents)}
          price={tts.price}
          money={money}
          maxChars={tts.maxChars}
          locale={locale}
          languages={languages}
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
            disabled={chars === 0 || (tts.maxChars > 0 && chars > tts.maxChars) || !!quote?.error}
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
          testMode={config.payment?.mode !== "stripe"}
          paying={paying}
          onPay={pay}
        />
      </ol>
    </article>
  );
}
