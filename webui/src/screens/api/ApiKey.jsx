import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { fetchCreditKey } from "../../api.js";
import { formatMilliMoney } from "../../lib/pricing.js";
import { CREDIT_KEY, remove } from "../../lib/storage.js";
import { Link } from "../../router.jsx";
import Loader from "../../Loader.jsx";

/** How often the page asks whether the payment came. */
const POLL_MS = 1500;

/**
 * The confirmation of a credit purchase (/api-payment/success?session_id=): waits for the
 * payment, then shows the key with a copy button. The server gives it in full once; a
 * reload shows it masked (it is in the letter).
 */
export default function ApiKey() {
  const { t, i18n } = useTranslation();
  const sessionId = new URLSearchParams(window.location.search).get("session_id") || "";
  const [credit, setCredit] = useState(null);
  const [error, setError] = useState("");
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!sessionId) return undefined;
    const ctl = new AbortController();
    let timer;
    const paid = (c) => {
      remove(CREDIT_KEY); // the form on /api is done with (Buy)
      setCredit(c);
    };
    const poll = () =>
      fetchCreditKey(sessionId, { signal: ctl.signal }).then(
        (c) => (c ? paid(c) : (timer = setTimeout(poll, POLL_MS))),
        (err) => err?.name !== "AbortError" && setError(err?.code || "network_error"),
      );
    poll();
    return () => {
      ctl.abort();
      clearTimeout(timer);
    };
  }, [sessionId]);
  const lng = i18n.language === "jp" ? "ja" : i18n.language;
  const copy = async () => {
    await navigator.clipboard?.writeText(credit.key);
    setCopied(true);
  };
  if (error || !sessionId) {
    return (
      <section className="card error-box" role="alert">
        <h1>{t("apiKey.title")}</h1>
        <p>{i18n.exists(`errors.${error}`) ? t(`errors.${error}`) : t("api.failed")}</p>
        <Link to="/api">{t("apiKey.back")}</Link>
      </section>
    );
  }
  if (!credit) return <Loader label={t("apiKey.waiting")} />;
  return (
    <section className="card api-key">
      <h1>{t("apiKey.title")}</h1>
      <p>{t(credit.full ? "apiKey.shown" : "apiKey.masked")}</p>
      <p className="input-row">
        <code dir="ltr" data-testid="api-key">
          {credit.key}
        </code>
        {credit.full && (
          <button type="button" className="button" onClick={copy} data-testid="copy-key">
            {copied ? t("apiKey.copied") : t("apiKey.copy")}
          </button>
        )}
      </p>
      <p data-testid="api-key-balance">
        {t("apiKey.balance", {
          amount: formatMilliMoney(credit.balance, credit.currency, lng),
          date: new Date(credit.expiresAt).toLocaleDateString(lng),
        })}
      </p>
      <Link to="/api">{t("apiKey.back")}</Link>
    </section>
  );
}
