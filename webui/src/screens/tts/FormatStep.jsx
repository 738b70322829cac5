import { useTranslation } from "react-i18next";
import Step from "./Step.jsx";

/** Step 3: the audio format of the result. */
export default function FormatStep({ formats, format, onFormat }) {
  const { t, i18n } = useTranslation();
  return (
    <Step n={3} id="format" title={t("tts.step3")}>
      <fieldset className="formats">
        <legend className="sr-only">{t("tts.step3")}</legend>
        {formats.map((f) => (
          <label key={f} className={`format${f === format ? " selected" : ""}`}>
            <input type="radio" name="format" value={f} checked={f === format} onChange={() => onFormat(f)} />
            <span className="format-name">{f}</span>
            {i18n.exists(`tts.formats.${f}`) && <span className="format-desc">{t(`tts.formats.${f}`)}</span>}
          </label>
        ))}
      </fieldset>
    </Step>
  );
}
