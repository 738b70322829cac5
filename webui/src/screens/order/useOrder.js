import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useConfig } from "../../config.jsx";
import { languageById } from "../../languages.js";
import { checkout, lineItem } from "../../lib/checkout.js";
import { formatMoney } from "../../lib/pricing.js";
import { isOpen } from "../../lib/services.js";
import { usePaidOrder } from "./usePaidOrder.js";

/**
 * The state every order page shares — format, e-mails, spoken language, the
 * English translation option, paying, whether the order is paid already —
 * and its pay action. `initial` is the order restored from storage
 * ({email, outputFormat, language, translate}). `open` says whether the
 * service is open, `locale` and `money` (cents → text) speak the visitor's
 * language.
 */
export function useOrder(service, initial) {
  const config = useConfig();
  const { t, i18n } = useTranslation();
  const [email, setEmail] = useState(initial.email);
  const [emailVerify, setEmailVerify] = useState(initial.email);
  const [format, setFormat] = useState(initial.outputFormat);
  const [language, setLanguage] = useState(initial.language);
  // The engine may be unable to translate (an English-only whisper model): then the
  // option is not offered and a stored wish for it is not sent.
  const canTranslate = config[service]?.translate !== false;
  const [wantTranslate, setTranslate] = useState(initial.translate === true);
  const translate = canTranslate && wantTranslate;
  const [paying, setPaying] = useState(false);
  // The order of this page's key, when it is paid already (one order, one payment).
  const { paid, setPaid, startNew, keyOf } = usePaidOrder(service);

  /**
   * Pays `amount` for the service's own fields in `order`; the shared fields
   * are added here. The language is sent only when chosen ("Detect
   * automatically" sends none), translate only when ticked. `description` is
   * the line item's (the transcription pages' unless told). `keep(quote)`,
   * when given, stores the page's order: first as it is (`keep()`), and with
   * no quote (`keep(null)`) when the server refuses the checkout with one of
   * the `stale` codes (the upload or the video is gone or has changed), so
   * that back on the page the visitor gets a new quote.
   */
  async function pay(order, amount, { description = t("transcribe.productDescription"), keep, stale = [] } = {}) {
    keep?.();
    setPaying(true);
    const payload = {
      order: { ...order, email, emailVerify, locale: i18n.language, ...(language && { language }), ...(translate && { translate }) },
      products: [lineItem({ currency: config.currency, amount, name: t(`${service}.productName`), description })],
    };
    const onRefused = (code) => {
      if (stale.includes(code)) keep?.(null);
    };
    if (!(await checkout(service, payload, config.payment, { onRefused, onAlreadyPaid: setPaid, key: keyOf() }))) setPaying(false);
  }

  const locale = languageById(i18n.language).tag;
  return {
    open: isOpen(config, service),
    locale,
    money: (cents) => formatMoney(cents, config.currency, locale),
    testMode: config.payment?.mode !== "stripe",
    email,
    setEmail,
    emailVerify,
    setEmailVerify,
    format,
    setFormat,
    language,
    setLanguage,
    translate,
    setTranslate,
    canTranslate,
    paying,
    pay,
    paid,
    startNew,
  };
}
