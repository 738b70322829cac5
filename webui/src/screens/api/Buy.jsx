import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { createCreditCheckout } from "../../api.js";
import { emailError, emailsMismatch } from "../../lib/email.js";
import { redirectTo } from "../../lib/redirect.js";
import { CREDIT_KEY, LANG_KEY, readJSON, remove, write, writeJSON } from "../../lib/storage.js";
import EmailStep from "../order/EmailStep.jsx";
import Field from "../order/Field.jsx";
import Step from "../order/Step.jsx";

/**
 * Why an amount cannot be paid: "" when it can, else the hint's key (below the minimum,
 * above the maximum, not a number). Without the limits yet, nothing is said.
 */
function amountProblem(cents, limits) {
  if (!limits) return "";
  if (!Number.isFinite(cents) || cents <= 0) return "api.amountInvalid";
  if (cents < limits.min) return "api.amountBelow";
  if (cents > limits.max) return "api.amountAbove";
  return "";
}

/**
 * Buying credit: the amount, the e-mail address twice, Pay. The form is kept while the
 * checkout is open, with the page's language (the checkout returns to an address without
 * one, which opens in the remembered language): a checkout cancelled or left comes back to
 * the form as it was typed, and says so once; the key's page (ApiKey) forgets it once paid.
 */
export default function Buy({ limits, money }) {
  const { t, i18n } = useTranslation();
  const [pending] = useState(() => readJSON(CREDIT_KEY));
  const [euros, setEuros] = useState(pending?.euros ?? "5");
  const [email, setEmail] = useState(pending?.email ?? "");
  const [emailVerify, setEmailVerify] = useState(pending?.email ?? "");
  useEffect(() => remove(CREDIT_KEY), []);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const cents = Math.round(Number(String(euros).replace(",", ".")) * 100);
  const problem = amountProblem(cents, limits);
  const ready = limits && !problem && emailError(email) === "" && !emailsMismatch(email, emailVerify) && email === emailVerify;
  const pay = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const res = await createCreditCheckout({ amount: cents, email, emailVerify, locale: i18n.language });
      writeJSON(CREDIT_KEY, { euros, email });
      write(LANG_KEY, i18n.language);
      redirectTo(res.url);
    } catch (err) {
      setError(err?.code || "network_error");
      setBusy(false);
    }
  };
  return (
    <form onSubmit={pay} aria-labelledby="buy-title">
      <h2 id="buy-title">{t("api.buyHeading")}</h2>
      {pending && (
        <p className="warning" role="status" data-testid="credit-cancelled">
          {t("api.cancelled")}
        </p>
      )}
      <ol className="steps">
        <Step n={1} id="amount" title={t("api.buyTitle")}>
          <Field
            id="credit-amount"
            label={t("api.amount")}
            type="number"
            inputMode="decimal"
            min={limits ? limits.min / 100 : 5}
            max={limits ? limits.max / 100 : 100}
            step="0.01"
            value={euros}
            onValue={setEuros}
            aria-invalid={problem ? true : undefined}
            aria-describedby="credit-amount-hint"
          />
          <p className="hint" id="credit-amount-hint">
            {limits && t("api.amountHint", { min: money(limits.min), max: money(limits.max), days: limits.validDays })}
          </p>
          {problem && (
            <p className="warning" data-testid="credit-amount-problem">
              {t(problem, { min: money(limits.min), max: money(limits.max) })}
            </p>
          )}
        </Step>
        <EmailStep
          n={2}
          title={t("api.emailTitle")}
          hint={t("api.emailHint")}
          email={email}
          emailVerify={emailVerify}
          onEmail={setEmail}
          onEmailVerify={setEmailVerify}
        />
        <Step n={3} id="pay" title={t("api.payTitle")}>
          {error && (
            <p className="warning" role="alert" data-testid="credit-error">
              {i18n.exists(`errors.${error}`) ? t(`errors.${error}`) : t("api.failed")}
            </p>
          )}
          <button type="submit" className="primary" disabled={!ready || busy} data-testid="credit-pay">
            {t("api.pay", { amount: limits && !problem ? money(cents) : "" })}
          </button>
        </Step>
      </ol>
    </form>
  );
}
