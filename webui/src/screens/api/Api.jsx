import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { createCreditCheckout, creditBalance, getCreditConfig } from "../../api.js";
import { useConfig } from "../../config.jsx";
import { emailError, emailsMismatch } from "../../lib/email.js";
import { formatMoney } from "../../lib/pricing.js";
import { redirectTo } from "../../lib/redirect.js";
import EmailStep from "../order/EmailStep.jsx";
import Field from "../order/Field.jsx";
import Step from "../order/Step.jsx";

/** What a rule charges per `per` units, in cents (the API charges proportionally, no minimum). */
const rate = (rule) => (rule ? rule.unitAmount : 0);

/**
 * Parla from code (/api): what the OpenAI-compatible API is and costs, buying credit
 * (amount, e-mail twice, Pay), and a key's balance and recent calls.
 */
export default function Api() {
  const { t, i18n } = useTranslation();
  const config = useConfig();
  const [limits, setLimits] = useState(null);
  useEffect(() => {
    const ctl = new AbortController();
    getCreditConfig({ signal: ctl.signal }).then(setLimits, () => {});
    return () => ctl.abort();
  }, []);
  const money = (cents) => formatMoney(cents, config?.currency || "eur", i18n.language === "jp" ? "ja" : i18n.language);
  const base = window.location.origin;
  return (
    <section className="order api-page">
      <h1>{t("api.title")}</h1>
      <p className="lead">{t("api.subtitle")}</p>
      <p>
        {t("api.prices", { tts: money(rate(config?.tts?.price)), stt: money(rate(config?.sst?.price)) })}
      </p>
      <Buy limits={limits} money={money} />
      <Balance money={money} />
      <section className="card" aria-labelledby="example-title">
        <h2 id="example-title">{t("api.exampleTitle")}</h2>
        <p>{t("api.exampleText", { base: `${base}/v1` })}</p>
        <pre className="code" dir="ltr" data-testid="api-example">
          {`curl ${base}/v1/audio/speech \\\n  -H "Authorization: Bearer $PARLA_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"model":"tts-1","input":"Hello from Parla","voice":"alloy"}' -o hello.mp3`}
        </pre>
      </section>
    </section>
  );
}

/** Buying credit: the amount, the e-mail address twice, Pay. */
function Buy({ limits, money }) {
  const { t, i18n } = useTranslation();
  const [euros, setEuros] = useState("5");
  const [email, setEmail] = useState("");
  const [emailVerify, setEmailVerify] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const cents = Math.round(Number(String(euros).replace(",", ".")) * 100);
  const inRange = limits && cents >= limits.min && cents <= limits.max;
  const ready = inRange && emailError(email) === "" && !emailsMismatch(email, emailVerify) && email === emailVerify;
  const pay = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const res = await createCreditCheckout({ amount: cents, email, emailVerify, locale: i18n.language });
      redirectTo(res.url);
    } catch (err) {
      setError(err?.code || "network_error");
      setBusy(false);
    }
  };
  return (
    <form onSubmit={pay}>
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
            aria-describedby="credit-amount-hint"
          />
          <p className="hint" id="credit-amount-hint">
            {limits && t("api.amountHint", { min: money(limits.min), max: money(limits.max), days: limits.validDays })}
          </p>
        </Step>
        <EmailStep n={2} title={t("api.emailTitle")} email={email} emailVerify={emailVerify} onEmail={setEmail} onEmailVerify={setEmailVerify} />
        <Step n={3} id="pay" title={t("api.payTitle")}>
          {error && (
            <p className="warning" role="alert" data-testid="credit-error">
              {i18n.exists(`errors.${error}`) ? t(`errors.${error}`) : t("api.failed")}
            </p>
          )}
          <button type="submit" className="button pay" disabled={!ready || busy} data-testid="credit-pay">
            {t("api.pay", { amount: inRange ? money(cents) : "" })}
          </button>
        </Step>
      </ol>
    </form>
  );
}

/** A key's balance and its recent calls (sizes, prices, times). */
function Balance({ money }) {
  const { t, i18n } = useTranslation();
  const [key, setKey] = useState("");
  const [credit, setCredit] = useState(null);
  const [error, setError] = useState("");
  const check = async (e) => {
    e.preventDefault();
    setError("");
    try {
      setCredit(await creditBalance(key));
    } catch (err) {
      setCredit(null);
      setError(err?.code === "invalid_api_key" ? t("api.invalidKey") : t("api.failed"));
    }
  };
  const date = (unix) => new Date(unix * 1000).toLocaleString(i18n.language === "jp" ? "ja" : i18n.language);
  return (
    <section className="card" aria-labelledby="balance-title">
      <h2 id="balance-title">{t("api.balanceTitle")}</h2>
      <form onSubmit={check}>
        <Field id="credit-key" label={t("api.key")} value={key} onValue={setKey} autoComplete="off" spellCheck={false} dir="ltr" row="input-row">
          <button type="submit" className="button" disabled={!key.trim()} data-testid="credit-check">
            {t("api.check")}
          </button>
        </Field>
      </form>
      {error && (
        <p className="warning" role="alert">
          {error}
        </p>
      )}
      {credit && (
        <div data-testid="credit-balance">
          <p>{t("api.balance", { amount: money(credit.balance), date: date(credit.expires_at) })}</p>
          {credit.calls.length === 0 ? (
            <p>{t("api.noCalls")}</p>
          ) : (
            <table className="calls">
              <caption>{t("api.calls")}</caption>
              <thead>
                <tr>
                  <th scope="col">{t("api.model")}</th>
                  <th scope="col">{t("api.size")}</th>
                  <th scope="col">{t("api.cost")}</th>
                  <th scope="col">{t("api.time")}</th>
                </tr>
              </thead>
              <tbody>
                {credit.calls.map((c, i) => (
                  <tr key={i}>
                    <td dir="ltr">{c.model}</td>
                    <td>{c.unit === "characters" ? t("api.chars", { count: c.units }) : t("api.seconds", { n: (c.units / 1000).toFixed(1) })}</td>
                    <td>{c.status === "settled" ? money(c.cost) : t("api.notCharged")}</td>
                    <td>{date(c.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </section>
  );
}
