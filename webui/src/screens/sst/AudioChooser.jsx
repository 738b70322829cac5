import { useTranslation } from "react-i18next";
import Field from "../order/Field.jsx";
import Duration from "../transcription/Duration.jsx";

/**
 * Step 1 of /sst: the file chooser (audio types plus the accepted extensions),
 * the stated limits and price, the spoken language, and the chosen file's
 * duration as the browser reads it. The limits are stated, not enforced
 * (spec: "Validation rules"); the server enforces them.
 */
export default function AudioChooser({ accepted, onChoose, chosen, maxSize, tooLarge, estimate, locale }) {
  const { t } = useTranslation();
  const accept = ["audio/*", ...accepted.map((f) => `.${f}`)].join(",");
  return (
    <>
      <Field
        id="audio-file"
        label={t("sst.fileLabel")}
        type="file"
        accept={accept}
        onChange={(e) => onChoose(e.target.files?.[0])}
        aria-describedby="audio-limits"
        data-testid="file"
      />
      <div id="audio-limits">
        <p className="hint">{t("sst.maxSize", { size: maxSize })}</p>
        <p className="hint">{t("sst.accepted", { formats: accepted.join(", ") })}</p>
      </div>
      {chosen && (
        <div className="chosen" aria-live="polite">
          <p className="info">{t("sst.chosen", { name: chosen.file.name })}</p>
          {chosen.seconds === undefined ? (
            <p className="hint">{t("sst.reading")}</p>
          ) : chosen.seconds ? (
            <>
              <Duration seconds={chosen.seconds} locale={locale} testId="browser-duration" labelKey="sst.browserDuration" />
              {estimate && <p className="info">{t("sst.estimate", { price: estimate })}</p>}
            </>
          ) : (
            <p className="hint">{t("sst.durationUnknown")}</p>
          )}
          {tooLarge && (
            <p className="warning" role="alert">
              {t("sst.tooLarge", { size: maxSize })}
            </p>
          )}
        </div>
      )}
    </>
  );
}
