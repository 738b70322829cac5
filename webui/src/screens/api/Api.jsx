import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { getCreditConfig } from "../../api.js";
import { useConfig } from "../../config.jsx";
import { formatMilliMoney, formatMoney } from "../../lib/pricing.js";
import { isOpen } from "../../lib/services.js";
import Balance from "./Balance.jsx";
import Buy from "./Buy.jsx";
import { CreditRules, FromOpenAI, Prices } from "./Guide.jsx";
import Reference from "./Reference.jsx";
import Samples from "./Samples.jsx";

/**
 * Parla from code (/api), as a developer coming from OpenAI needs it: the prices (the
 * server's published rules, with worked examples), buying credit, a key's balance and calls,
 * what maps to what, samples and the reference. Transcription is sold only while the server
 * says it is open (GET /api/config), as /v1/models lists it.
 */
export default function Api() {
  const { t, i18n } = useTranslation();
  const config = useConfig();
  const [limits, setLimits] = useState(null);
  useEffect(() => {
    const ctl = new AbortController();
    getCreditConfig({ signal: ctl.signal }).then(setLimits, () => {});
    return () => ctl.abort();
  }, []);
  const lng = i18n.language === "jp" ? "ja" : i18n.language;
  const currency = config?.currency || "eur";
  const money = (cents) => formatMoney(cents, currency, lng);
  const exact = (cents) => formatMilliMoney(cents, currency, lng);
  const date = (unix) => new Date(unix * 1000).toLocaleString(lng, { dateStyle: "short", timeStyle: "short" });
  const sttOpen = Boolean(config) && isOpen(config, "sst");
  const base = `${window.location.origin}/v1`;
  return (
    <section className="order api-page">
      <h1>{t("api.title")}</h1>
      <p className="lead">{t(sttOpen ? "api.subtitle" : "api.subtitleSpeech")}</p>
      <Prices config={config} sttOpen={sttOpen} money={exact} lng={lng} />
      <Buy limits={limits} money={money} />
      <CreditRules days={limits?.validDays} />
      <Balance money={exact} date={date} />
      <FromOpenAI base={base} sttOpen={sttOpen} />
      <Samples base={base} sttOpen={sttOpen} />
      <Reference sttOpen={sttOpen} maxUploadBytes={config?.sst?.maxUploadBytes} />
    </section>
  );
}
