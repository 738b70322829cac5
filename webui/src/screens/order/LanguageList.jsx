import { useTranslation } from "react-i18next";
import { useLanguageOptions } from "../../lib/inputLanguages.js";

/** The collapsible list of supported input languages, named in the visitor's language. */
export default function LanguageList({ locale, codes }) {
  const { t } = useTranslation();
  const names = useLanguageOptions(locale, codes).map((l) => l.name);
  return (
    <details className="languages">
      <summary>{t("order.languagesSummary", { n: names.length })}</summary>
      <ul>
        {names.map((n) => (
          <li key={n}>{n}</li>
        ))}
      </ul>
    </details>
  );
}
