import { useTranslation } from "react-i18next";
import { MODELS, milliCents, priceRows } from "../../lib/apiDocs.js";
import { Link } from "../../router.jsx";

/** A quantity as words: characters, or a duration in the largest whole unit. */
function quantity(t, lng, row) {
  if (row.service === "tts") return t("api.exampleSpeech", { n: new Intl.NumberFormat(lng).format(row.quantity) });
  const [unit, n] = row.quantity % 3600 === 0 ? ["hour", row.quantity / 3600] : row.quantity % 60 === 0 ? ["minute", row.quantity / 60] : ["second", row.quantity];
  return t("api.exampleStt", { duration: new Intl.NumberFormat(lng, { style: "unit", unit, unitDisplay: "long" }).format(n) });
}

/**
 * The prices, from the server's published rules (GET /api/config): the rates of the open
 * services and a table of worked examples, to the thousandth of a cent as the API charges.
 */
export function Prices({ config, sttOpen, money, lng }) {
  const { t } = useTranslation();
  const speech = money(milliCents(config?.tts?.price, 1000) / 1000);
  const minute = money(milliCents(config?.sst?.price, 60000, 1000) / 1000);
  return (
    <section className="card" aria-labelledby="prices-title">
      <h2 id="prices-title">{t("api.pricesTitle")}</h2>
      <p data-testid="api-prices">
        {t("api.priceSpeech", { price: speech })} {sttOpen && t("api.priceStt", { price: minute })}
      </p>
      <p>{t("api.priceNote")}</p>
      {config && (
        <table className="prices">
          <thead>
            <tr>
              <th scope="col">{t("api.exampleCall")}</th>
              <th scope="col">{t("api.cost")}</th>
            </tr>
          </thead>
          <tbody>
            {priceRows(config, sttOpen).map((r) => (
              <tr key={`${r.service}${r.quantity}`}>
                <td>{quantity(t, lng, r)}</td>
                <td>{money(r.cents)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** "Coming from OpenAI": the base URL, the key, what maps to what, what is not supported. */
export function FromOpenAI({ base, sttOpen }) {
  const { t } = useTranslation();
  const code = (s) => (
    <code dir="ltr" key={s}>
      {s}
    </code>
  );
  return (
    <section className="card" aria-labelledby="openai-title">
      <h2 id="openai-title">{t("api.openaiTitle")}</h2>
      <ul className="guide">
        <li>
          {t("api.openaiBase")} {code(base)}
        </li>
        <li>{t("api.openaiKey")}</li>
        <li>{t("api.openaiSpeech", { models: MODELS.tts.slice(0, 3).join(", ") })}</li>
        {sttOpen ? <li>{t("api.openaiStt", { models: MODELS.sst.slice(0, 3).join(", ") })}</li> : <li data-testid="api-stt-closed">{t("api.openaiSttClosed")}</li>}
        <li>{t("api.openaiStreamSpeech")}</li>
        {sttOpen && <li>{t("api.openaiStreamStt")}</li>}
        <li>{t("api.openaiUnsupported")}</li>
      </ul>
    </section>
  );
}

/** What happens when the credit runs out, what the terms say of it, its days (once known), and a lost key. */
export function CreditRules({ days }) {
  const { t } = useTranslation();
  return (
    <section className="card" aria-labelledby="rules-title">
      <h2 id="rules-title">{t("api.rulesTitle")}</h2>
      <ul className="guide">
        <li>{t("api.rulesRunsOut")}</li>
        <li>{t("api.rulesNewKey")}</li>
        {days > 0 && <li>{t("api.rulesDays", { days })}</li>}
        <li>
          {t("api.rulesTerms")} <Link to="/terms">{t("legal.terms.title")}</Link> · <Link to="/refunds">{t("legal.refunds.title")}</Link>
        </li>
        <li>{t("api.rulesLost")}</li>
      </ul>
    </section>
  );
}
