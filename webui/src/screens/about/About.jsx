import { useTranslation } from "react-i18next";
import { useConfig } from "../../config.jsx";
import { isOpen } from "../../lib/services.js";
import { Link } from "../../router.jsx";
import { siteInfo } from "../../site.js";
import OpenServices from "../closed/OpenServices.jsx";

const POINTS = ["onDemand", "payPerUse", "global", "privacy", "friendly", "evolution"];

/**
 * The about page: what Parla is, in the six points of the spec. The privacy point says what
 * the privacy page says, with the server's number of days a result is kept (from the page the
 * server rendered, or /api/config; "/" does not wait for the config, so until a number is
 * known the point states nothing rather than a wrong one).
 */
export default function About() {
  const { t } = useTranslation();
  const config = useConfig();
  const ttsOpen = isOpen(config, "tts");
  const linkDays = siteInfo().retention?.linkDays ?? config?.retention?.linkDays ?? config?.linkDays;
  return (
    <article className="about">
      <h1>{t("about.title")}</h1>
      <p className="lead">{t("about.intro")}</p>
      <OpenServices />
      <ul className="points">
        {POINTS.map((p) => (
          <li key={p} className="card">
            <h2>{t(`about.points.${p}.title`)}</h2>
            {(p !== "privacy" || linkDays != null) && <p>{t(`about.points.${p}.text`, { linkDays })}</p>}
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
