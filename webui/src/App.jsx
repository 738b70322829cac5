import { lazy, Suspense, useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { getConfig, prefetchTranscript } from "./api.js";
import { ConfigContext, inlineConfig } from "./config.jsx";
import { applyDocumentLanguage, changeLanguage } from "./i18n.js";
import { LANGUAGES } from "./languages.js";
import { Link, navigate, splitPath, usePath } from "./router.jsx";
import { siteInfo } from "./site.js";
import { isOpen } from "./lib/services.js";
import About from "./screens/about/About.jsx";
import Loader from "./Loader.jsx";
import PAGES from "./pages.json";

// Every screen but the home page is a chunk of its own (the server's page preloads the
// route's: pages.json's "screen", api/preload.go), so a page loads its own screen only.
const legal = () => import("./screens/legal/Legal.jsx");
const Terms = lazy(() => legal().then((m) => ({ default: m.Terms })));
const Privacy = lazy(() => legal().then((m) => ({ default: m.Privacy })));
const Refunds = lazy(() => legal().then((m) => ({ default: m.Refunds })));
const PaymentError = lazy(() => import("./screens/payment-error/PaymentError.jsx"));
const Tts = lazy(() => import("./screens/tts/Tts.jsx"));
const Stt = lazy(() => import("./screens/stt/Stt.jsx"));
const Vtt = lazy(() => import("./screens/vtt/Vtt.jsx"));
const Confirmation = lazy(() => import("./screens/confirmation/Confirmation.jsx"));
const Api = lazy(() => import("./screens/api/Api.jsx"));
const ApiKey = lazy(() => import("./screens/api/ApiKey.jsx"));
const loadEditor = () => import("./screens/editor/Editor.jsx");
const Editor = lazy(loadEditor);

/** The transcript editor's address: /r/{token}/edit (api/editor.go serves it to a live link). */
const EDIT_ROUTE = /^\/r\/([^/]+)\/edit$/;

/** The editor's token in a path (without its language), or "". */
const editToken = (path) => EDIT_ROUTE.exec(path.replace(/\/+$/, ""))?.[1] ?? "";

// Opening the editor, its chunk and the transcript are asked for at once, side by side,
// while the rest of the app starts, rather than one after the other once the route renders:
// a 3-hour transcript opens sooner (webui/scripts/editor-bench.mjs).
const opening = editToken(splitPath(window.location.pathname).path);
if (opening) {
  prefetchTranscript(opening);
  loadEditor();
}

// The menu; a service the server reports closed is left out (its page still says so).
const NAV = [
  { to: "/", key: "nav.about" },
  { to: "/tts", key: "nav.tts" },
  { to: "/sst", key: "nav.sst" },
  { to: "/vtt", key: "nav.vtt" },
  { to: "/api", key: "nav.api", always: true },
];

// The screen of each route of pages.json, which names its title and description (the
// server renders the same ones first: api/pages.go reads the same file).
const SCREENS = {
  "/": () => <About />,
  "/tts": () => <Tts />,
  "/sst": () => <Stt />,
  "/vtt": () => <Vtt />,
  "/terms": () => <Terms />,
  "/privacy": () => <Privacy />,
  "/refunds": () => <Refunds />,
  "/payment/success": () => <Confirmation service="tts" />,
  "/sst-payment/success": () => <Confirmation service="sst" />,
  "/vtt-payment/success": () => <Confirmation service="vtt" />,
  "/payment/error": () => <PaymentError />,
  "/api": () => <Api />,
  "/api-payment/success": () => <ApiKey />,
};

/** The screen for a path, plus the keys naming and describing it (for the metadata). */
function route(path) {
  const token = editToken(path);
  if (token) return { title: "editor.title", el: <Editor token={token} /> };
  const p = path.replace(/\/+$/, "") || "/";
  const page = PAGES[p];
  if (!page || !SCREENS[p]) return { title: "notFound.title", desc: "notFound.text", el: <NotFound /> };
  return { title: page.title, desc: page.description, el: SCREENS[p](), needsConfig: Boolean(page.needsConfig) };
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
  const [config, setConfig] = useState(inlineConfig);
  const [configError, setConfigError] = useState(null);

  const load = useCallback(() => {
    setConfigError(null);
    const ctl = new AbortController();
    getConfig({ signal: ctl.signal }).then(setConfig, (err) => {
      if (err?.name !== "AbortError") setConfigError(err);
    });
    return () => ctl.abort();
  }, []);
  // Asked for only when the page did not carry it (api/spa.go writes it into every page).
  useEffect(() => (config ? undefined : load()), [load]); // config: the first value only

  const { title, desc, el, needsConfig } = route(path);
  const retention = siteInfo().retention || config?.retention;
  useEffect(() => {
    const r = retention || {};
    const description = desc && t(desc, { linkDays: r.linkDays, uploadHours: r.uploadHours, unpaidHours: r.unpaidHours });
    applyDocumentLanguage(t, i18n.language, title ? t(title) : "", description, path);
  }, [t, i18n.language, title, desc, path, retention]);

  // The address follows the language: choosing Spanish on /tts moves to /es/tts.
  useEffect(() => {
    const { lang, path: route } = splitPath(window.location.pathname);
    if (lang !== i18n.language) {
      navigate(route + window.location.search + window.location.hash, { replace: true, lang: i18n.language });
    }
  }, [i18n.language]);

  // Contact and version come with the page itself (api/pages.go), so they show even when
  // /api/config cannot be reached.
  const site = siteInfo();
  const contact = site.contact || config?.contactEmail || import.meta.env.VITE_CONTACT_EMAIL;
  const version = site.version || config?.version;

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
          {NAV.filter((n) => n.to === "/" || n.always || isOpen(config, n.to.slice(1))).map((n) => (
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
        <span className="legal-links" role="group" aria-label={t("legal.footerLabel")}>
          <Link to="/terms">{t("legal.terms.title")}</Link>
          <Link to="/privacy">{t("legal.privacy.title")}</Link>
          <Link to="/refunds">{t("legal.refunds.title")}</Link>
        </span>
        {contact && <a href={`mailto:${contact}`}>{t("footer.contact")}</a>}
        {version && <span className="version">{version}</span>}
      </footer>
    </ConfigContext.Provider>
  );
}
