import { useTranslation } from "react-i18next";
import { emailsMismatch } from "../../lib/email.js";
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
      <div className="field">
        <label htmlFor="email">{t("order.email")}</label>
        <input
          id="email"
          type="email"
          autoComplete="email"
          value={email}
          onChange={(e) => onEmail(e.target.value)}
          aria-describedby="email-hint"
        />
      </div>
      <div className="field">
        <label htmlFor="email-verify">{t("order.emailVerify")}</label>
        <input
          id="email-verify"
          type="email"
          autoComplete="email"
          value={emailVerify}
          onChange={(e) => onEmailVerify(e.target.value)}
          aria-invalid={mismatch || undefined}
          aria-describedby={mismatch ? "email-mismatch" : undefined}
        />
      </div>
      {mismatch && (
        <p id="email-mismatch" className="warning" role="alert">
          {t("order.emailMismatch")}
        </p>
      )}
    </Step>
  );
}
