import { useTranslation } from "react-i18next";
import { useConfig } from "../../config.jsx";
import { Link } from "../../router.jsx";
import { siteInfo } from "../../site.js";

// The retention numbers come from the server-rendered page (the same settings the order
// book runs on), or /api/config when the page did not carry them.
function useRetention() {
  const config = useConfig();
  return siteInfo().retention || config?.retention || null;
}

function vars(r) {
  return r ? { linkDays: r.linkDays, uploadHours: r.uploadHours, unpaidHours: r.unpaidHours } : {};
}

/** /terms */
export function Terms() {
  const { t } = useTranslation();
  const v = vars(useRetention());
  return (
    <section className="card legal" data-testid="terms">
      <h1>{t("legal.terms.title")}</h1>
      {["p1", "p2", "p3", "p4", "p5", "p6", "p7"].map((k) => (
        <p key={k}>{t(`legal.terms.${k}`, v)}</p>
      ))}
      <p>
        <Link to="/refunds">{t("legal.refunds.title")}</Link> · <Link to="/privacy">{t("legal.privacy.title")}</Link>
      </p>
    </section>
  );
}

/** /privacy: what is kept, for how long, and when it is erased, from the server's numbers. */
export function Privacy() {
  const { t } = useTranslation();
  const r = useRetention();
  const v = vars(r);
  const items = ["text", "email", "unpaid", "upload", "result", "card", "browser"];
  return (
    <section className="card legal" data-testid="privacy">
      <h1>{t("legal.privacy.title")}</h1>
      <p>{t("legal.privacy.intro")}</p>
      <h2>{t("legal.privacy.heading")}</h2>
      {r ? (
        <ul data-testid="retention">
          {items.map((k) => (
            <li key={k}>{t(`legal.privacy.${k}`, v)}</li>
          ))}
        </ul>
      ) : (
        <p>{t("app.configError")}</p>
      )}
      <p>{t("legal.privacy.contact")}</p>
    </section>
  );
}

/** /refunds */
export function Refunds() {
  const { t } = useTranslation();
  return (
    <section className="card legal" data-testid="refunds">
      <h1>{t("legal.refunds.title")}</h1>
      {["p1", "p2", "p3", "p4", "p5"].map((k) => (
        <p key={k}>{t(`legal.refunds.${k}`)}</p>
      ))}
    </section>
  );
}
