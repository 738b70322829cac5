import { useTranslation } from "react-i18next";
import { useConfig } from "../../config.jsx";
import { isOpen } from "../../lib/services.js";
import { Link } from "../../router.jsx";
import OpenServices from "../closed/OpenServices.jsx";

const POINTS = ["onDemand", "payPerUse", "global", "privacy", "friendly", "evolution"];

/** The about page: what Parla is, in the six points of the spec. */
export default function About() {
  const { t } = useTranslation();
  const ttsOpen = isOpen(useConfig(), "tts");
  return (
    <article className="about">
      <h1>{t("about.title")}</h1>
      <p className="lead">{t("about.intro")}</p>
      <OpenServices />
      <ul className="points">
        {POINTS.map((p) => (
          <li key={p} className="card">
            <h2>{t(`about.points.${p}.title`)}</h2>
            <p>{t(`about.points.${p}.text`)}</p>
          </li>
        ))}
      </ul>
      {ttsOpen && (
        <p>
          <Link to="/tts" className="button">
            {t("about.cta")}
          </Link>
        </p>
      )}
    </article>
  );
}
