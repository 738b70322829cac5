import { useEffect, useMemo, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { analyzeVideo } from "../../api.js";
import { useConfig } from "../../config.jsx";
import { languageById } from "../../languages.js";
import { restoreVttOrder, vttRecord } from "../../lib/orders.js";
import { formatMoney } from "../../lib/pricing.js";
import { readJSON, VTT_KEY, writeJSON } from "../../lib/storage.js";
import ServiceClosed from "../closed/ServiceClosed.jsx";
import Step from "../order/Step.jsx";
import DeliverySteps from "../transcription/DeliverySteps.jsx";
import Intro from "../transcription/Intro.jsx";
import LanguageAndPrice from "../transcription/LanguageAndPrice.jsx";
import { useOrder } from "../transcription/useOrder.js";
import VideoLink from "./VideoLink.jsx";

/** Whole seconds of an analysis answer: `duration`, else minutes and seconds. */
function analysedSeconds(r) {
  if (Number.isInteger(r.duration) && r.duration > 0) return r.duration;
  return (Number(r.durationMinutes) || 0) * 60 + (Number(r.durationSeconds) || 0);
}

// Checkout refusals after which the stored analysis is of no use.
const STALE_QUOTE = ["price_mismatch", "not_media", "live_stream", "video_unavailable", "video_too_long", "source_unreachable"];

/**
 * The video-to-text page (spec section 2): a link, analysed by the server for
 * its duration and price without downloading the video, then the format, the
 * e-mails and the payment. There is no upload step.
 */
export default function Vtt() {
  const config = useConfig();
  const { t, i18n } = useTranslation();
  const vtt = config.vtt;
  const initial = useMemo(() => restoreVttOrder(readJSON(VTT_KEY), vtt), [vtt]);
  const { email, format, language, pay, facts, steps } = useOrder("vtt", initial);
  const [link, setLink] = useState(initial.link);
  const [analysis, setAnalysis] = useState(initial.analysis); // the server's answer, for analysis.link
  const [analyzing, setAnalyzing] = useState(false);
  const [error, setError] = useState("");
  const abort = useRef(null);
  const open = config.services?.vtt?.open !== false;

  useEffect(() => {
    if (open) writeJSON(VTT_KEY, vttRecord({ email, outputFormat: format, language, link, analysis }));
  }, [open, email, format, language, link, analysis]);
  useEffect(() => () => abort.current?.abort(), []);

  if (!open) return <ServiceClosed service="vtt" reason={config.services.vtt.reason} />;

  const locale = languageById(i18n.language).tag;
  const money = (cents) => formatMoney(cents, config.currency, locale);
  // The quote belongs to the link it was made for; editing the link withdraws it.
  const quote = analysis && analysis.link === link.trim() ? analysis : null;

  async function analyze() {
    const video = link.trim();
    setError("");
    if (!video) {
      setError("empty_link");
      return;
    }
    abort.current?.abort();
    abort.current = new AbortController();
    setAnalyzing(true);
    try {
      const r = await analyzeVideo(video, { signal: abort.current.signal });
      setAnalysis({ link: video, duration: analysedSeconds(r), amount: r.amount, title: r.title || "" });
      setLink(video);
    } catch (err) {
      if (err?.name === "AbortError") return;
      setAnalysis(null);
      setError(err?.code || "network_error");
    }
    setAnalyzing(false);
  }

  function payQuote() {
    writeJSON(VTT_KEY, vttRecord({ email, outputFormat: format, language, link, analysis }));
    pay({ selectedFile: quote.link, outputFormat: format }, quote.amount, (code) => {
      // The video changed or went away since the analysis: back on this page the visitor analyses again.
      if (STALE_QUOTE.includes(code)) writeJSON(VTT_KEY, vttRecord({ email, outputFormat: format, language, link, analysis: null }));
    });
  }

  return (
    <article className="vtt">
      <Intro service="vtt" engine={vtt.engine} />
      <ol className="steps">
        <Step n={1} id="link" title={t("vtt.step1")}>
          <VideoLink
            link={link}
            onLink={(v) => {
              setLink(v);
              setError("");
            }}
            onAnalyze={analyze}
            analyzing={analyzing}
            error={error}
            quote={quote}
            cost={quote ? money(quote.amount) : ""}
            maxSeconds={vtt.maxSeconds}
            locale={locale}
          />
          <LanguageAndPrice {...facts} money={money} locale={locale} />
        </Step>
        <DeliverySteps n={2} {...steps} costCents={quote?.amount || 0} money={money} onPay={payQuote} />
      </ol>
    </article>
  );
}
