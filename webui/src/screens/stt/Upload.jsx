import { useTranslation } from "react-i18next";
import ErrorNote from "../order/ErrorNote.jsx";
import Duration from "../transcription/Duration.jsx";
import Speech from "../transcription/Speech.jsx";

/** Step 2 of /sst: the Upload button with its live percentage, then the server's duration, its speech and the price. */
export default function Upload({ sending, onUpload, upload, cost, locale }) {
  const { t } = useTranslation();
  return (
    <>
      <button type="button" className="primary" onClick={onUpload} disabled={sending.busy} aria-busy={sending.busy || undefined} data-testid="upload">
        {t("sst.upload")}
      </button>
      <div className="progress" aria-live="polite" data-testid="upload-progress">
        {sending.busy && (
          <>
            <progress max={100} value={sending.progress} aria-label={t("sst.progressLabel")} />
            <span>{sending.progress < 100 ? t("sst.uploading", { p: sending.progress }) : t("sst.checking")}</span>
          </>
        )}
      </div>
      <ErrorNote code={sending.error} />
      {upload && (
        <div className="quote" data-testid="uploaded">
          <p className="info">{t("sst.uploaded", { name: upload.fileName })}</p>
          {upload.duration > 0 && <Duration seconds={upload.duration} locale={locale} testId="server-duration" />}
          {upload.duration > 0 && <Speech speech={upload.speechSeconds} seconds={upload.duration} locale={locale} />}
          <p className="info">
            <strong data-testid="cost">{t("sst.cost", { price: cost })}</strong>
          </p>
        </div>
      )}
    </>
  );
}
