import { useTranslation } from "react-i18next";

/** The notice for a service that the server reports as not open. */
export default function ServiceClosed({ service, reason }) {
  const { t, i18n } = useTranslation();
  const key = `closed.reasons.${reason}`;
  return (
    <section className="card notice" role="status">
      <h1>{t(`nav.${service}`)}</h1>
      <p className="notice-title">{t("closed.title")}</p>
      <p>{t("closed.text", { service: t(`nav.${service}`) })}</p>
      {reason && <p>{i18n.exists(key) ? t(key) : t("closed.reasons.other")}</p>}
    </section>
  );
}
