import { lazy, Suspense, useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { getConfig } from "./api.js";
import { ConfigContext } from "./config.jsx";
import { applyDocumentLanguage, changeLanguage } from "./i18n.js";
import { LANGUAGES } from "./languages.js";
import { Link, usePath } from "./router.jsx";
import About from "./screens/about/About.jsx";
import PaymentError from "./screens/payment-error/PaymentError.jsx";
import Loader from "./Loader.jsx";

// Heavier screens are separate chunks so the about page loads little.
const Tts = lazy(() => import("./screens/tts/Tts.jsx"));
const Sst = lazy(() => import("./screens/sst/Sst.jsx"));
const Vtt = lazy(() => import("./screens/vtt/Vtt.jsx"));
const Confirmation = lazy(() => import("./screens/confirmation/Confirmation.jsx"));

const NAV = [
  { to: "/", key: "nav.about" },
  { to: "/tts", key: "nav.tts" },
  { to: "/sst", key: "nav.sst" },
  { to: "/vtt", key: "nav.vtt" },
];

/** The screen for a path, plus the nav key naming it (for the title). */
function route(path) {
  switch (path.replace(/\/+$/, "") || "/") {
    case "/":
      return { title: "nav.about", el: <About /> };
    case "/tts":
      return { title: "nav.tts", el: <Tts />, needsConfig: true };
    case "/sst":
      return { title: "nav.sst", el: <Sst />, needsConfig: true };
    case "/vtt":
      return { title: "nav.vtt", el: <Vtt />, needsConfig: true };
    case "/payment/success":
      return { title: "confirm.paid", el: <Confirmation service="tts" />, needsConfig: true };
    case "/sst-payment/success":
      return { title: "confirm.paid", el: <Confirmation service="sst" />, needsConfig: true };
    case "/vtt-payment/success":
      return { title: "confirm.paid", el: <Confirmation service="vtt" />, needsConfig: true };
    case "/payment/error":
      return { title: "paymentError.title", el: <PaymentError /> };
    default:
      return { title: "notFound.title", el: <NotFound /> };
  }
}

function NotFound() {
  const { t } = useTranslation();
  return (
    <section className="card">
      <h1>{t("notFound.title")}</h1>
      <p>{t("notFound.text")}</p>
      <p>
        <Link to="/">{t("common.backHome")}</Link>
      </p>
    </section>
  );
}

function LanguageSelect() {
  const { t, i18n } = useTranslation();
  return (
    <label className="lang">
      <span className="lang-label">{t("app.language")}</span>
      <select value={i18n.language} onChange={(e) => changeLanguage(e.target.value)} data-testid="language">
        {LANGUAGES.map((l) => (
          <option key={l.id} value={l.id} lang={l.tag}>
            {l.name}
          </option>
        ))}
      </select>
    </label>
  );
}

export default function App() {
  const { t, i18n } = useTranslation();
  const path = usePath();
  const [config, setConfig] = useState(null);
  const [configError, setConfigError] = useState(null);

  const load = useCallback(() => {
    setConfigError(null);
    const ctl = new AbortController();
    getConfig({ signal: ctl.signal }).then(setConfig, (err) => {
      if (err?.name !== "AbortError") setConfigError(err);
    });
    return () => ctl.abort();
  }, []);
  useEffect(load, [load]);

  const { title, el, needsConfig } = route(path);
  useEffect(() => {
    applyDocumentLanguage(t, i18n.language, t(title));
  }, [t, i18n.language, title]);

  const contact = config?.contactEmail || import.meta.env.VITE_CONTACT_EMAIL;

  return (
    <ConfigContext.Provider value={config}>
      <a className="skip" href="#main">
        {t("app.skipToContent")}
      </a>
      <header className="site-header">
        <div className="brand">
          <Link to="/" className="brand-title">
            {t("app.title")}
          </Link>
          <p className="slogan">{t("app.slogan")}</p>
        </div>
        <LanguageSelect />
      </header>
      <nav className="site-nav" aria-label={t("nav.label")}>
        <ul>
          {NAV.map((n) => (
            <li key={n.to}>
              <Link to={n.to} activeClassName="active">
                {t(n.key)}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {needsConfig && configError ? (
          <section className="card" role="alert">
            <p>{t("app.configError")}</p>
            <button type="button" onClick={load}>
              {t("app.retry")}
            </button>
          </section>
        ) : needsConfig && !config ? (
          <Loader label={t("app.loading")} />
        ) : (
          <Suspense fallback={<Loader label={t("app.loading")} />}>{el}</Suspense>
        )}
      </main>
      <footer className="site-footer">
        <span>{t("footer.builtBy")}</span>
        {contact && <a href={`mailto:${contact}`}>{t("footer.contact")}</a>}
        {config?.version && <span className="version">{config.version}</span>}
      </footer>
    </ConfigContext.Provider>
  );
}
