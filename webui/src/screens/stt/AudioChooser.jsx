import { useTranslation } from "react-i18next";
import { formatLimit } from "../../lib/duration.js";
import Field from "../order/Field.jsx";
import Duration from "../transcription/Duration.jsx";

/**
 * Step 1 of /sst: the file chooser (audio types plus the accepted extensions),
 * the stated limits and price, the spoken language, and the chosen file's
 * duration as the browser reads it. The limits (size, and the longest recording: config's
 * sst.maxSeconds) are stated, not enforced (spec: "Validation rules"); the server enforces them.
 */
export default function AudioChooser({ accepted, onChoose, chosen, maxSize, maxSeconds, tooLarge, estimate, locale }) {
  const { t } = useTranslation();
  const accept = ["audio/*", ...accepted.map((f) => `.${f}`)].join(",");
  return (
    <>
      {/* The browser would write its own button and "no file chosen" in its own language:
          the input is visually hidden (still focused by Tab, opened by Enter or Space), and a
          label styled as a button and the chosen name speak the interface language. */}
      <Field
        id="audio-file"
        label={t("sst.fileLabel")}
        row="file-picker"
        className="field file-field"
        type="file"
        accept={accept}
        onChange={(e) => onChoose(e.target.files?.[0])}
        aria-describedby="audio-limits"
        data-testid="file"
      >
        <label htmlFor="audio-file" className="button file-button" aria-hidden="true" data-testid="file-button">
          {t("sst.chooseFile")}
        </label>
        <span className="file-name" data-testid="file-name">
          {chosen?.file?.name || t("sst.noFile")}
        </span>
      </Field>
      <div id="audio-limits">
        <p className="hint">{t("sst.maxSize", { size: maxSize })}</p>
        {maxSeconds > 0 && <p className="hint">{t("sst.maxDuration", { duration: formatLimit(maxSeconds, locale) })}</p>}
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
