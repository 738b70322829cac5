import { useTranslation } from "react-i18next";
import { engineName } from "../../lib/engines.js";

/** The intro of a transcription page: title, subtitle, description and the engine that does the work. */
export default function Intro({ service, engine }) {
  const { t } = useTranslation();
  return (
    <header className="intro">
      <h1>{t(`${service}.title`)}</h1>
      <p className="lead">{t(`${service}.subtitle`)}</p>
      <p>{t(`${service}.description`)}</p>
      {engine && (
        <p className="provider hint" data-testid="provider">
          {t("transcribe.provider", { engine: engineName(engine) })}
        </p>
      )}
    </header>
  );
}
