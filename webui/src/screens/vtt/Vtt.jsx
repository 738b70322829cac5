import { useEffect, useMemo, useRef, useState } from "react";
import { analyzeVideo } from "../../api.js";
import { useConfig } from "../../config.jsx";
import { restoreVttOrder, vttRecord } from "../../lib/storedOrders.js";
import { readJSON, VTT_KEY, writeJSON } from "../../lib/storage.js";
import TranscriptionPage from "../transcription/TranscriptionPage.jsx";
import { useOrder } from "../order/useOrder.js";
import VideoLink from "./VideoLink.jsx";

/** Whole seconds of an analysis answer: `duration`, else minutes and seconds. */
function analysedSeconds(r) {
  if (Number.isInteger(r.duration) && r.duration > 0) return r.duration;
  return (Number(r.durationMinutes) || 0) * 60 + (Number(r.durationSeconds) || 0);
}

// Checkout refusals after which the stored analysis is of no use: the video changed or went away, back on this page the visitor analyses again.
const STALE_QUOTE = ["price_mismatch", "not_media", "live_stream", "video_unavailable", "video_too_long", "source_unreachable", "no_speech"];

/**
 * The video-to-text page (spec: "Screens and routes"): a link, analysed by the server for
 * its duration and price without downloading the video, then the format, the
 * e-mails and the payment. There is no upload step.
 */
export default function Vtt() {
  const config = useConfig();
  const vtt = config.vtt;
  const initial = useMemo(() => restoreVttOrder(readJSON(VTT_KEY), vtt), [vtt]);
  const order = useOrder("vtt", initial);
  const { email, format, language, translate, pay, open, locale, money } = order;
  const [link, setLink] = useState(initial.link);
  const [analysis, setAnalysis] = useState(initial.analysis); // the server's answer, for analysis.link
  const [analyzing, setAnalyzing] = useState(false);
  const [error, setError] = useState("");
  const abort = useRef(null);

  // Stores the order, with `withQuote` as its analysis (the current one unless told).
  const keep = (withQuote = analysis) => writeJSON(VTT_KEY, vttRecord({ email, outputFormat: format, language, translate, link, analysis: withQuote }));
  useEffect(() => {
    if (open) keep();
  }, [open, email, format, language, translate, link, analysis]);
  useEffect(() => () => abort.current?.abort(), []);

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
      const speechSeconds = Number.isInteger(r.speechSeconds) ? r.speechSeconds : null; // absent: not measured
      setAnalysis({ link: video, duration: analysedSeconds(r), speechSeconds, amount: r.amount, title: r.title || "" });
      setLink(video);
    } catch (err) {
      if (err?.name === "AbortError") return;
      setAnalysis(null);
      setError(err?.code || "network_error");
    }
    setAnalyzing(false);
  }

  const payQuote = () => pay({ link: quote.link, format }, quote.amount, { keep, stale: STALE_QUOTE });

  const media = (
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
  );
  return (
    <TranscriptionPage
      service="vtt"
      stepId="link"
      order={order}
      costCents={quote?.amount || 0}
      onPay={payQuote}
      media={media}
      previewOf={quote ? { video: quote.link } : null}
    />
  );
}
