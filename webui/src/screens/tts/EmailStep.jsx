import { useTranslation } from "react-i18next";
import Step from "./Step.jsx";

/** Step 4: the e-mail address, typed twice. */
export default function EmailStep({ email, emailVerify, onEmail, onEmailVerify, mismatch }) {
  const { t } = useTranslation();
  return (
    <Step n={4} id="email" title={t("tts.step4")}>
      <p className="hint" id="email-hint">
        {t("tts.emailHint")}
      </p>
      <div className="field">
        <label htmlFor="email">{t("tts.email")}</label>
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
        <label htmlFor="email-verify">{t("tts.emailVerify")}</label>
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
          {t("tts.emailMismatch")}
        </p>
      )}
    </Step>
  );
}
