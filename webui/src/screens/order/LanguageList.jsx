import { useTranslation } from "react-i18next";
import { engineOf } from "../../lib/engines.js";
import { useLanguageOptions } from "../../lib/inputLanguages.js";

/**
 * The collapsible list of supported input languages, named in the visitor's language.
 * With several speech engines (readers: config's tts.engines) the languages come in one
 * list per engine, under the name of the engine that reads them.
 */
export default function LanguageList({ locale, codes, readers }) {
  const { t } = useTranslation();
  const options = useLanguageOptions(locale, codes);
  const engines = engineOf(readers);
  const groups = readers?.length > 1 ? readers.map((r) => r.engine) : [""];
  return (
    <details className="languages">
      <summary>{t("order.languagesSummary", { n: options.length })}</summary>
      {groups.map((engine) => (
        <div key={engine} className="engine-languages" data-engine={engine || undefined}>
          {engine && <h3>{t("tts.readBy", { engine })}</h3>}
          <ul>
            {options
              .filter((o) => !engine || engines[o.code] === engine)
              .map((o) => (
                <li key={o.code}>{o.name}</li>
              ))}
          </ul>
        </div>
      ))}
    </details>
  );
}
