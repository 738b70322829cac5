import { useTranslation } from "react-i18next";
import { useConfig } from "../../config.jsx";
import { Link } from "../../router.jsx";
import ServiceClosed from "./ServiceClosed.jsx";

/**
 * Placeholder for the audio-to-text and video-to-text pages until their
 * screens exist; a service the server reports closed says so instead.
 */
export default function ComingSoon({ service }) {
  const { t } = useTranslation();
  const config = useConfig();
  const state = config?.services?.[service];
  if (state && state.open === false) return <ServiceClosed service={service} reason={state.reason} />;
  return (
    <section className="card notice">
      <h1>{t(`nav.${service}`)}</h1>
      <p className="notice-title">{t("soon.title")}</p>
      <p>{t("soon.text", { service: t(`nav.${service}`) })}</p>
      <p>
        <Link to="/tts" className="button">
          {t("soon.tryTts")}
        </Link>
      </p>
    </section>
  );
}
