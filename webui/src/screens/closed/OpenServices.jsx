import { useTranslation } from "react-i18next";
import { useConfig } from "../../config.jsx";
import { openServices, SERVICES } from "../../lib/services.js";
import { Link } from "../../router.jsx";

/**
 * What the site offers now, as links, once some service is closed: on the closed page it is
 * the way on, on the home page it keeps the page from promising what cannot be ordered.
 * Nothing while every service is open.
 */
export default function OpenServices() {
  const { t } = useTranslation();
  const open = openServices(useConfig());
  if (open.length === SERVICES.length || open.length === 0) return null;
  return (
    <p className="open-services" data-testid="open-services">
      {t("closed.openNow")}{" "}
      {open.map((s, i) => (
        <span key={s}>
          {i > 0 && ", "}
          <Link to={`/${s}`}>{t(`nav.${s}`)}</Link>
        </span>
      ))}
    </p>
  );
}
