import { useTranslation } from "react-i18next";
import { useLanguageOptions } from "../../lib/inputLanguages.js";

/** The optional language of the recording: "Detect automatically" (empty) or one of the engine's languages. */
export default function SpokenLanguage({ codes, value, onChange, locale }) {
  const { t } = useTranslation();
  const options = useLanguageOptions(locale, codes);
  return (
    <div className="field">
      <label htmlFor="spoken-language">{t("transcribe.language")}</label>
      <select id="spoken-language" value={value} onChange={(e) => onChange(e.target.value)} aria-describedby="spoken-language-hint">
        <option value="">{t("transcribe.detect")}</option>
        {options.map((o) => (
          <option key={o.code} value={o.code}>
            {o.name}
          </option>
        ))}
      </select>
      <p className="hint" id="spoken-language-hint">
        {t("transcribe.languageHint")}
      </p>
    </div>
  );
}
