import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { createCheckoutSession } from "../../api.js";
import { useConfig } from "../../config.jsx";
import { languageById } from "../../languages.js";
import { emailsMismatch } from "../../lib/email.js";
import { canPayTts } from "../../lib/order.js";
import { countChars, formatMoney, ttsCostCents } from "../../lib/pricing.js";
import { parseSpeed } from "../../lib/speed.js";
import { redirectTo } from "../../lib/redirect.js";
import { voiceName } from "../../lib/voices.js";
import { readJSON, SESSION_KEY, TTS_KEY, write, writeJSON } from "../../lib/storage.js";
import { navigate } from "../../router.jsx";
import ServiceClosed from "../coming-soon/ServiceClosed.jsx";
import EmailStep from "./EmailStep.jsx";
import FormatStep from "./FormatStep.jsx";
import PayStep from "./PayStep.jsx";
import TextStep from "./TextStep.jsx";
import VoiceStep from "./VoiceStep.jsx";

/** The choices saved when the visitor last paid (or left for the checkout). */
function restore(tts) {
  const saved = readJSON(TTS_KEY) || {};
  const voice = tts.voices.includes(saved.activeVoice) ? saved.activeVoice : tts.defaultVoice;
  const format = tts.formats.includes(saved.outputFormat) ? saved.outputFormat : tts.defaultFormat;
  const speed = Number.isFinite(saved.speed) ? parseSpeed(saved.speed, tts.speed) : tts.speed.default;
  const email = typeof saved.email === "string" ? saved.email : "";
  const text = typeof saved.ttsText === "string" ? saved.ttsText : "";
  return { voice, format, speed, email, emailVerify: email, text };
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
  const [paying, setPaying] = useState(false);
  // Marks when the form is on screen and usable (read by the browser test as time to interactive).
  useEffect(() => {
    performance.mark?.("parla:tts-interactive");
  }, []);

  const service = config.services?.tts;
  if (service && service.open === false) return <ServiceClosed service="tts" reason={service.reason} />;

  const locale = languageById(i18n.language).tag;
  const chars = countChars(text);
  const costCents = ttsCostCents(chars, tts.price);
  const money = (cents) => formatMoney(cents, config.currency, locale);
  const payable = canPayTts({ costCents, chars, maxChars: tts.maxChars, email, emailVerify });

  async function pay() {
    setPaying(true);
    writeJSON(TTS_KEY, { activeVoice: voice, ttsText: text, speed, email, outputFormat: format });
    let res;
    try {
      res = await createCheckoutSession("tts", {
        order: { voice, input: text, format, speed, email, emailVerify, locale: i18n.language },
        products: [
          {
            price_data: {
              currency: config.currency,
              unit_amount: costCents,
              product_data: {
                name: t("tts.productName"),
                description: t("tts.productDescription", { n: chars, voice: voiceName(voice), format }),
                images: [],
              },
            },
            quantity: 1,
          },
        ],
      });
      if (!res?.ok || !res.sessionId) throw Object.assign(new Error("bad_response"), { code: "bad_response" });
    } catch (err) {
      navigate(`/payment/error?service=tts&code=${encodeURIComponent(err?.code || "network_error")}`);
      return;
    }
    write(SESSION_KEY, res.sessionId);
    if (config.payment?.mode === "stripe") {
      try {
        // Stripe.js is fetched only now, when the visitor actually pays.
        const { loadStripe } = await import("@stripe/stripe-js/pure");
        const stripe = await loadStripe(config.payment.publishableKey);
        if (typeof stripe?.redirectToCheckout === "function") {
          await stripe.redirectToCheckout({ sessionId: res.sessionId });
        } else if (res.url) {
          redirectTo(res.url);
          return;
        }
      } catch {
        /* a failed redirect is silently ignored (spec section 8) */
      }
      setPaying(false);
      return;
    }
    redirectTo(res.url);
  }

  return (
    <article className="tts">
      <h1>{t("tts.title")}</h1>
      <p className="lead">{t("tts.subtitle")}</p>
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
          unitChars={tts.price.unitChars}
          unitPrice={money(tts.price.unitAmount)}
          maxChars={tts.maxChars}
          locale={locale}
        />
        <FormatStep formats={tts.formats} format={format} onFormat={setFormat} />
        <EmailStep
          email={email}
          emailVerify={emailVerify}
          onEmail={setEmail}
          onEmailVerify={setEmailVerify}
          mismatch={emailsMismatch(email, emailVerify)}
        />
        <PayStep
          payable={payable}
          price={money(costCents)}
          testMode={config.payment?.mode !== "stripe"}
          paying={paying}
          onPay={pay}
        />
      </ol>
    </article>
  );
}

