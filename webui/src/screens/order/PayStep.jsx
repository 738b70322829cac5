import { useTranslation } from "react-i18next";
import Step from "./Step.jsx";
import { CheckoutNotice } from "./CheckoutNotice.jsx";

/** The last step of an order: the total and the pay button, or the prompt to finish the steps above. */
export default function PayStep({ n, title, payable, info, button, prompt, testMode, paying, onPay }) {
  const { t } = useTranslation();
  return (
    <Step n={n} id="pay" title={title}>
      {payable ? (
        <div className="pay">
          {info.map((line) => (
            <p key={line}>{line}</p>
          ))}
          {testMode && <p className="hint">{t("order.testMode")}</p>}
          <CheckoutNotice />
          <button type="button" className="primary" onClick={onPay} disabled={paying} data-testid="pay">
            {paying ? t("order.paying") : button}
          </button>
        </div>
      ) : (
        <p className="prompt">{prompt}</p>
      )}
    </Step>
  );
}
