import { useTranslation } from "react-i18next";
import OpenServices from "./OpenServices.jsx";

/**
 * The page of a service that the server reports as not open, in the visitor's words: not
 * offered here at the moment, nothing to pay, and the services that are offered. Why it is
 * closed is the operator's business (/admin, /readyz), so the reason only picks the wording.
 */
export default function ServiceClosed({ service, reason }) {
  const { t, i18n } = useTranslation();
  const key = `closed.reasons.${reason}`;
  return (
    <section className="card notice" role="status" data-testid="service-closed">
      <h1>{t(`nav.${service}`)}</h1>
      <p className="notice-title">{t("closed.title")}</p>
      <p>{t("closed.text", { service: t(`nav.${service}`) })}</p>
      <p>{i18n.exists(key) ? t(key) : t("closed.reasons.other")}</p>
      <OpenServices />
    </section>
  );
}
