import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "../../router.jsx";

/**
 * Says that the order on this page is paid already, with the way to its page, and offers
 * a new order (a new payment, the form's values kept). Shown instead of paying again.
 */
export default function PaidNotice({ order, onNew }) {
  const { t } = useTranslation();
  const ref = useRef(null);
  useEffect(() => {
    ref.current?.scrollIntoView?.({ block: "nearest" });
  }, [order?.sessionId]);
  return (
    <section className="card notice" role="alert" data-testid="already-paid" ref={ref}>
      <p>{t("errors.order_already_paid")}</p>
      <p>
        <Link to={order.url} className="button primary" data-testid="open-paid">
          {t("order.openPaid")}
        </Link>{" "}
        <button type="button" onClick={onNew} data-testid="new-order">
          {t("order.newOrder")}
        </button>
      </p>
    </section>
  );
}
