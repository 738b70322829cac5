import { useTranslation } from "react-i18next";
import { Link } from "../../router.jsx";

const SERVICES = ["tts", "sst", "vtt"];

/**
 * The box reading Payment Error. The page that failed passes the API error
 * code (?code=) and its service (?service=) so the explanation is specific.
 */
export default function PaymentError() {
  const { t, i18n } = useTranslation();
  const q = new URLSearchParams(window.location.search);
  const code = q.get("code");
  const service = SERVICES.includes(q.get("service")) ? q.get("service") : "tts";
  const codeKey = `errors.${code}`;
  return (
    <section className="card error-box" role="alert">
      <h1>{t("paymentError.title")}</h1>
      <p>{t("paymentError.text")}</p>
      {code && i18n.exists(codeKey) && <p className="error-detail">{t(codeKey)}</p>}
      <p>
        <Link to={`/${service}`} className="button">
          {t("paymentError.back", { service: t(`nav.${service}`) })}
        </Link>
      </p>
    </section>
  );
}
