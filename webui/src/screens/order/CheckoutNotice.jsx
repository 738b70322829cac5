import { Trans, useTranslation } from "react-i18next";
import { addressOf } from "../../router.jsx";

/** The line above every Pay button: paying accepts the terms and the refund policy.
 * The pages open in a new tab, so the order being filled in stays where it is. */
export function CheckoutNotice() {
  const { i18n } = useTranslation();
  const a = (path) => <a href={addressOf(path, i18n.language)} target="_blank" rel="noopener" />;
  return (
    <p className="hint" data-testid="checkout-notice">
      <Trans
        i18nKey="legal.checkoutNotice"
        components={{
          terms: a("/terms"),
          refunds: a("/refunds"),
          privacy: a("/privacy"),
        }}
      />
    </p>
  );
}
