import { useState } from "react";
import { useTranslation } from "react-i18next";
import { samples } from "../../lib/apiDocs.js";

/** The samples' languages, in the tabs' order, and their names. */
const LANGS = [
  ["curl", "curl"],
  ["js", "JavaScript"],
  ["python", "Python"],
];

/**
 * Copyable samples against this server's /v1: speech, transcription (only while it is
 * open) and the balance, each in curl, JavaScript (openai on npm) and Python (openai on
 * PyPI); one choice of language for all.
 */
export default function Samples({ base, sttOpen }) {
  const { t } = useTranslation();
  const [lang, setLang] = useState("curl");
  return (
    <section className="card samples" aria-labelledby="samples-title">
      <h2 id="samples-title">{t("api.samplesTitle")}</h2>
      <p>{t("api.samplesText")}</p>
      <div className="tabs" role="tablist" aria-label={t("api.samplesLanguage")}>
        {LANGS.map(([id, name]) => (
          <button key={id} type="button" role="tab" aria-selected={lang === id} className={lang === id ? "primary" : ""} onClick={() => setLang(id)}>
            {name}
          </button>
        ))}
      </div>
      {samples(base, sttOpen).map((s) => (
        <Sample key={s.task} title={t(`api.sample.${s.task}`)} task={s.task} code={s.code[lang]} />
      ))}
    </section>
  );
}

/** One sample with its copy button. */
function Sample({ title, task, code }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard?.writeText(code);
    setCopied(true);
  };
  return (
    <div className="sample" role="tabpanel" aria-label={title}>
      <h3>{title}</h3>
      <pre className="code" dir="ltr" data-testid={`api-sample-${task}`}>
        {code}
      </pre>
      <button type="button" className="secondary" onClick={copy}>
        {copied ? t("apiKey.copied") : t("apiKey.copy")}
      </button>
    </div>
  );
}
