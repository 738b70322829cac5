import { useTranslation } from "react-i18next";
import Step from "./Step.jsx";

/** Step 5: the price and the pay button, or the prompt to finish the steps above. */
export default function PayStep({ payable, price, testMode, paying, onPay }) {
  const { t } = useTranslation();
  return (
    <Step n={5} id="pay" title={t("tts.step5")}>
      {payable ? (
        <div className="pay">
          <p>{t("tts.payInfo", { price })}</p>
          {testMode && <p className="hint">{t("tts.testMode")}</p>}
          <button type="button" className="primary" onClick={onPay} disabled={paying} data-testid="pay">
            {paying ? t("tts.paying") : t("tts.pay", { price })}
          </button>
        </div>
      ) : (
        <p className="prompt">{t("tts.prompt")}</p>
      )}
    </Step>
  );
}
