import { useTranslation } from "react-i18next";
import { readersText } from "../../lib/engines.js";
import { useLanguageOptions } from "../../lib/inputLanguages.js";

/**
 * "Language of the text": detect automatically, or one of the engine's languages
 * (config's tts.languages, named in the visitor's language). Below it, what the
 * server's quote says the text will be spoken in, before paying, and with several
 * engines which engine reads which of its languages, in the same line (one change of
 * the page's height, not two).
 */
export default function LanguageField({ languages, locale, value, onChange, quote }) {
  const { t } = useTranslation();
  const options = useLanguageOptions(locale, languages);
  const nameOf = (code) => options.find((o) => o.code === code)?.name || code;
  let status = null;
  if (quote?.error) {
    status = (
      <p className="warning" role="alert" data-testid="language-error">
        {t(`errors.${quote.error}`, { defaultValue: t("errors.language_unsupported") })}
      </p>
    );
  } else if (quote?.language) {
    const key = !quote.detected ? "tts.languageChosen" : quote.mixed ? "tts.languageMixed" : "tts.languageDetected";
    const readers = readersText(t, quote.engines, nameOf, locale);
    status = (
      <p className="hint" aria-live="polite">
        <span data-testid="detected-language" data-code={quote.language}>
          {t(key, { language: nameOf(quote.language) })}
        </span>
        {readers && <span data-testid="language-engines"> {readers}</span>}
      </p>
    );
  }
  return (
    <div className="field language">
      <label htmlFor="tts-language">{t("tts.languageLabel")}</label>
      <select id="tts-language" value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{t("tts.languageDetect")}</option>
        {options.map((o) => (
          <option key={o.code} value={o.code}>
            {o.name}
          </option>
        ))}
      </select>
      {status}
    </div>
  );
}
