import { useTranslation } from "react-i18next";
import { emailsMismatch } from "../../lib/email.js";
import Field from "./Field.jsx";
import Step from "./Step.jsx";

/** The e-mail address of an order, typed twice, with the mismatch warning (spec section 5). */
export default function EmailStep({ n, title, email, emailVerify, onEmail, onEmailVerify }) {
  const { t } = useTranslation();
  const mismatch = emailsMismatch(email, emailVerify);
  return (
    <Step n={n} id="email" title={title}>
      <p className="hint" id="email-hint">
        {t("order.emailHint")}
      </p>
      <Field id="email" label={t("order.email")} type="email" autoComplete="email" value={email} onValue={onEmail} aria-describedby="email-hint" />
      <Field
        id="email-verify"
        label={t("order.emailVerify")}
        type="email"
        autoComplete="email"
        value={emailVerify}
        onValue={onEmailVerify}
        aria-invalid={mismatch || undefined}
        aria-describedby={mismatch ? "email-mismatch" : undefined}
      />
      {mismatch && (
        <p id="email-mismatch" className="warning" role="alert">
          {t("order.emailMismatch")}
        </p>
      )}
    </Step>
  );
}
