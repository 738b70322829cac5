import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import { inputLanguageNames } from "../../lib/inputLanguages.js";

/** The collapsible list of supported input languages, named in the visitor's language. */
export default function LanguageList({ locale, codes }) {
  const { t } = useTranslation();
  const names = useMemo(() => inputLanguageNames(locale, codes), [locale, codes]);
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
