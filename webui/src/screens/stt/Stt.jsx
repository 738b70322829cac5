import { useEffect, useMemo, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { uploadAudio } from "../../api.js";
import { useConfig } from "../../config.jsx";
import { formatSize } from "../../lib/duration.js";
import { readMediaDuration } from "../../lib/mediaDuration.js";
import { restoreSttOrder, sttRecord } from "../../lib/storedOrders.js";
import { priceCents } from "../../lib/pricing.js";
import { readJSON, STT_KEY, writeJSON } from "../../lib/storage.js";
import Step from "../order/Step.jsx";
import TranscriptionPage from "../transcription/TranscriptionPage.jsx";
import { useOrder } from "../order/useOrder.js";
import AudioChooser from "./AudioChooser.jsx";
import Upload from "./Upload.jsx";

// Checkout refusals after which the stored upload is of no use: back on this page the visitor uploads again.
const STALE_UPLOAD = ["upload_not_found", "price_mismatch"];

/**
 * The audio-to-text page (spec: "Screens and routes"): choose a file (its duration is
 * read in the browser), upload it (the server measures it again and quotes
 * the price), choose the format, give the e-mail twice, pay.
 */
export default function Stt() {
  const config = useConfig();
  const { t } = useTranslation();
  const sst = config.sst;
  const initial = useMemo(() => restoreSttOrder(readJSON(STT_KEY), sst), [sst]);
  const order = useOrder("sst", initial);
  const { email, format, language, translate, pay, open, locale, money } = order;
  const [upload, setUpload] = useState(initial.upload); // the server's answer: the truth for the price
  const [chosen, setChosen] = useState(null); // {file, seconds: number|null|undefined while reading}
  const [sending, setSending] = useState({ busy: false, progress: 0, error: "" });
  const [chooserKey, setChooserKey] = useState(0);
  const pick = useRef(0);
  const abort = useRef(null);

  // Stores the order, with `withQuote` as its upload (the current one unless told).
  const keep = (withQuote = upload) => writeJSON(STT_KEY, sttRecord({ email, outputFormat: format, language, translate, upload: withQuote }));
  useEffect(() => {
    if (open) keep();
  }, [open, email, format, language, translate, upload]);
  useEffect(() => () => abort.current?.abort(), []);

  async function choose(file) {
    if (!file) return;
    const n = ++pick.current;
    setChosen({ file, seconds: undefined });
    setUpload(null); // a new file replaces the previous quote
    setSending({ busy: false, progress: 0, error: "" });
    const seconds = await readMediaDuration(file);
    if (n === pick.current) setChosen({ file, seconds });
  }

  async function send() {
    const file = chosen?.file;
    if (!file) {
      console.log("Please select a file"); // spec, "The error catalogue": nothing else happens
      return;
    }
    abort.current = new AbortController();
    setSending({ busy: true, progress: 0, error: "" });
    try {
      const r = await uploadAudio(file, {
        signal: abort.current.signal,
        onProgress: (progress) => setSending((s) => ({ ...s, progress })),
      });
      setUpload({ fileName: r.file.filename, filePath: r.file.path, duration: r.duration, speechSeconds: Number.isInteger(r.speechSeconds) ? r.speechSeconds : null, amount: r.amount });
      setChosen(null);
      setChooserKey((k) => k + 1); // clears the file input
      setSending({ busy: false, progress: 100, error: "" });
    } catch (err) {
      if (err?.name === "AbortError") return;
      // A server that refuses an oversized body may close the connection before answering.
      const code = err?.code === "network_error" && file.size > sst.maxUploadBytes ? "file_too_large" : err?.code || "network_error";
      setSending({ busy: false, progress: 0, error: code });
    }
  }

  const payUpload = () => pay({ upload: upload.filePath, fileName: upload.fileName, format }, upload.amount, { keep, stale: STALE_UPLOAD });

  // The browser's reading of the duration, priced by the published rule; the upload's quote is the truth.
  const estimate = chosen?.seconds ? priceCents(Math.ceil(chosen.seconds), sst.price) : 0;
  const media = (
    <AudioChooser
      key={chooserKey}
      accepted={sst.acceptedFormats}
      onChoose={choose}
      chosen={chosen}
      maxSize={formatSize(sst.maxUploadBytes, locale)}
      maxSeconds={sst.maxSeconds}
      tooLarge={chosen && sst.maxUploadBytes > 0 && chosen.file.size > sst.maxUploadBytes}
      estimate={estimate ? money(estimate) : ""}
      locale={locale}
    />
  );
  return (
    <TranscriptionPage
      service="sst"
      stepId="file"
      order={order}
      costCents={upload?.amount || 0}
      onPay={payUpload}
      media={media}
      previewOf={upload?.filePath ? { filePath: upload.filePath } : null}
    >
      <Step n={2} id="upload" title={t("sst.step2")}>
        <Upload sending={sending} onUpload={send} upload={upload} cost={upload ? money(upload.amount) : ""} locale={locale} />
      </Step>
    </TranscriptionPage>
  );
}
