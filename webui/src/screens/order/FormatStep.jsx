import { useTranslation } from "react-i18next";
import Step from "./Step.jsx";

/** A format's name with a soft break after each underscore (verbose_<wbr>json), never mid-word. */
export function breakable(name) {
  const parts = name.split("_");
  return parts.flatMap((p, i) => (i < parts.length - 1 ? [p + "_", <wbr key={i} />] : [p]));
}

/**
 * The output format of an order as radio cards. `describe` is the key prefix
 * of the formats' descriptions; `current` shows the selection in words (the
 * transcription pages, where nothing is preselected).
 */
export default function FormatStep({ n, title, formats, format, onFormat, describe, current, children }) {
  const { t, i18n } = useTranslation();
  return (
    <Step n={n} id="format" title={title}>
      <fieldset className="formats">
        <legend className="sr-only">{title}</legend>
        {formats.map((f) => (
          <label key={f} className={`format${f === format ? " selected" : ""}`}>
            <input type="radio" name="format" value={f} checked={f === format} onChange={() => onFormat(f)} />
            <span className="format-name">{breakable(f)}</span>
            {i18n.exists(`${describe}.${f}`) && <span className="format-desc">{t(`${describe}.${f}`)}</span>}
          </label>
        ))}
      </fieldset>
      {current && (
        <p className="hint" aria-live="polite" data-testid="format-current">
          {format ? t("transcribe.formatCurrent", { format }) : t("transcribe.formatNone")}
        </p>
      )}
      {children}
    </Step>
  );
}
