import { useState } from "react";
import { useTranslation } from "react-i18next";
import { emailError, emailsMismatch } from "../../lib/email.js";
import Field from "./Field.jsx";
import Step from "./Step.jsx";

/**
 * The e-mail address of an order, typed twice, with the mismatch warning (spec: "Validation rules").
 * The address is checked by the server's rule when the visitor leaves the field (and,
 * once shown, as they correct it), with the server's message (errors.invalid_email). `hint`
 * says what is sent there (an order's download link by default).
 */
export default function EmailStep({ n, title, hint, email, emailVerify, onEmail, onEmailVerify }) {
  const { t } = useTranslation();
  const [checked, setChecked] = useState(false);
  const mismatch = emailsMismatch(email, emailVerify);
  const invalid = checked && emailError(email) !== "";
  const described = ["email-hint", invalid && "email-invalid"].filter(Boolean).join(" ");
  return (
    <Step n={n} id="email" title={title}>
      <p className="hint" id="email-hint">
        {hint || t("order.emailHint")}
      </p>
      <Field
        id="email"
        label={t("order.email")}
        type="email"
        autoComplete="email"
        value={email}
        onValue={onEmail}
        onBlur={() => setChecked(true)}
        aria-invalid={invalid || undefined}
        aria-describedby={described}
      />
      {invalid && (
        <p id="email-invalid" className="warning" role="alert" data-testid="email-invalid">
          {t("errors.invalid_email")}
        </p>
      )}
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
