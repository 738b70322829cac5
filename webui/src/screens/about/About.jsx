import { useTranslation } from "react-i18next";
import { Link } from "../../router.jsx";

const POINTS = ["onDemand", "payPerUse", "global", "privacy", "friendly", "evolution"];

/** The about page: what Parla is, in the six points of the spec. */
export default function About() {
  const { t } = useTranslation();
  return (
    <article className="about">
      <h1>{t("about.title")}</h1>
      <p className="lead">{t("about.intro")}</p>
      <ul className="points">
        {POINTS.map((p) => (
          <li key={p} className="card">
            <h2>{t(`about.points.${p}.title`)}</h2>
            <p>{t(`about.points.${p}.text`)}</p>
          </li>
        ))}
      </ul>
      <p>
        <Link to="/tts" className="button">
          {t("about.cta")}
        </Link>
      </p>
    </article>
  );
}
