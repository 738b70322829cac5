import { useState } from "react";
import { useTranslation } from "react-i18next";
import { creditBalance } from "../../api.js";
import Field from "../order/Field.jsx";

/**
 * A call's size as the calls table shows it: characters spoken, or seconds of audio (the
 * API counts milliseconds).
 */
function callSize(t, call) {
  return call.unit === "characters" ? t("api.chars", { count: call.units }) : t("api.seconds", { n: (call.units / 1000).toFixed(1) });
}

/**
 * A key's balance and its recent calls (sizes, prices to the thousandth of a cent, times).
 * `money` formats fractional cents (formatMilliMoney), `date` unix seconds.
 */
export default function Balance({ money, date }) {
  const { t } = useTranslation();
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
  return (
    <section className="card" aria-labelledby="balance-title">
      <h2 id="balance-title">{t("api.balanceTitle")}</h2>
      <form onSubmit={check}>
        <Field id="credit-key" label={t("api.key")} type="text" value={key} onValue={setKey} autoComplete="off" spellCheck={false} dir="ltr" row="input-row">
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
          {credit.calls.length === 0 ? <p>{t("api.noCalls")}</p> : <Calls calls={credit.calls} money={money} date={date} />}
        </div>
      )}
    </section>
  );
}

/** The calls table; on a narrow screen each call is a block of two lines (styles.css). */
function Calls({ calls, money, date }) {
  const { t } = useTranslation();
  return (
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
        {calls.map((c, i) => (
          <tr key={i} data-testid="credit-call">
            <td dir="ltr">{c.model}</td>
            <td>{callSize(t, c)}</td>
            <td>{c.status === "settled" ? money(c.cost) : t("api.notCharged")}</td>
            <td>{date(c.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
