import { useTranslation } from "react-i18next";
import { canPayTranscription } from "../../lib/payButton.js";
import EmailStep from "../order/EmailStep.jsx";
import FormatStep from "../order/FormatStep.jsx";
import PayStep from "../order/PayStep.jsx";

/**
 * The steps every transcription order ends with, numbered from `n`: output
 * format (nothing preselected), the e-mails, and the total with 'Pay and
 * Transcribe' — or the prompt to finish the first steps (spec: "States and transitions").
 */
export default function DeliverySteps({ n, service, formats, format, onFormat, email, emailVerify, onEmail, onEmailVerify, costCents, money, testMode, paying, onPay, paid }) {
  const { t } = useTranslation();
  const payable = canPayTranscription({ costCents, email, emailVerify }) && !paid;
  return (
    <>
      <FormatStep n={n} title={t("transcribe.formatStep")} formats={formats} format={format} onFormat={onFormat} describe="transcribe.formats" current />
      <EmailStep n={n + 1} title={t("transcribe.emailStep")} email={email} emailVerify={emailVerify} onEmail={onEmail} onEmailVerify={onEmailVerify} />
      <PayStep
        n={n + 2}
        title={t("transcribe.payStep")}
        payable={payable}
        info={[t("transcribe.total", { price: money(costCents) }), t("transcribe.payInfo")]}
        button={t("transcribe.pay")}
        prompt={paid ? t("order.alreadyPaid") : t(`${service}.prompt`)}
        testMode={testMode}
        paying={paying}
        onPay={onPay}
      />
    </>
  );
}
