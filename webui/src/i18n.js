import i18n from "i18next";
import { initReactI18next } from "react-i18next";
import { DEFAULT_LANGUAGE, LANGUAGES, languageById, languageCode } from "./languages.js";
import { LANG_KEY, read, write } from "./lib/storage.js";
import { addressOf, splitPath } from "./router.jsx";

// Every locale, English too, is its own chunk: a page loads its own language's strings
// only (the server's page preloads that chunk with the entry: api/preload.go), and
// another when the visitor picks it. Every locale holds every key (scripts/check-locales.mjs),
// so none needs English's as a fallback.
const loaders = import.meta.glob("./locales/*/translation.json", { import: "default" });

async function ensureLoaded(lng) {
  if (i18n.hasResourceBundle(lng, "translation")) return;
  const load = loaders[`./locales/${lng}/translation.json`];
  if (!load) return;
  i18n.addResourceBundle(lng, "translation", await load(), true, true);
}

// The address's language wins (a shared /es/tts opens in Spanish); an unprefixed
// address opens in the remembered language, and the app then moves to its address.
function initialLanguage() {
  const fromAddress = typeof window === "undefined" ? DEFAULT_LANGUAGE : splitPath(window.location.pathname).lang;
  if (fromAddress !== DEFAULT_LANGUAGE) return fromAddress;
  const saved = read(LANG_KEY);
  return LANGUAGES.some((l) => l.id === saved) ? saved : DEFAULT_LANGUAGE;
}

/** Switches the interface language, loading its strings first, and remembers it. */
export async function changeLanguage(lng) {
  const id = languageById(lng).id;
  await ensureLoaded(id);
  write(LANG_KEY, id);
  await i18n.changeLanguage(id);
}

/** Sets <html lang/dir> and the page metadata for the current language and route. */
export function applyDocumentLanguage(t, lngId, pageTitle, description, path) {
  const lang = languageById(lngId);
  const root = document.documentElement;
  root.lang = lang.tag;
  root.dir = lang.rtl ? "rtl" : "ltr";
  const title = pageTitle ? `${pageTitle} · ${t("meta.title")}` : t("meta.title");
  document.title = title;
  const desc = description || t("meta.description");
  setMeta("name", "description", desc);
  setMeta("name", "keywords", t("meta.keywords"));
  setMeta("property", "og:title", title);
  setMeta("property", "og:description", desc);
  setMeta("property", "og:locale", lang.og);
  setMeta("property", "og:site_name", "Parla");
  setMeta("property", "og:type", "website");
  setMeta("name", "twitter:card", "summary");
  setMeta("name", "twitter:title", title);
  setMeta("name", "twitter:description", desc);
  if (path) setAddresses(path, lngId);
}

// Keeps canonical, og:url and the hreflang alternates that the server rendered (on the
// server's own origin) in step with in-app navigation.
function setAddresses(path, lngId) {
  const canonical = document.head.querySelector('link[rel="canonical"]');
  if (!canonical) return; // a not-found page names none
  const origin = new URL(canonical.href, window.location.href).origin;
  canonical.href = origin + addressOf(path, lngId);
  setMeta("property", "og:url", canonical.href);
  for (const alt of document.head.querySelectorAll('link[rel="alternate"][hreflang]')) {
    const hl = alt.getAttribute("hreflang");
    const id = languageCode(hl, true) || DEFAULT_LANGUAGE;
    alt.href = origin + addressOf(path, id);
  }
}

function setMeta(attr, key, content) {
  let el = document.head.querySelector(`meta[${attr}="${key}"]`);
  if (!el) {
    el = document.createElement("meta");
    el.setAttribute(attr, key);
    document.head.appendChild(el);
  }
  el.setAttribute("content", content);
}

/** The strings of lng, or of English when its chunk cannot be loaded. */
async function firstStrings(lng) {
  try {
    return { lng, strings: await loaders[`./locales/${lng}/translation.json`]() };
  } catch {
    return { lng: DEFAULT_LANGUAGE, strings: await loaders[`./locales/${DEFAULT_LANGUAGE}/translation.json`]() };
  }
}

/** Initializes i18next with the remembered language; resolves once its strings are in. */
export async function initI18n() {
  const { lng, strings } = await firstStrings(initialLanguage());
  await i18n.use(initReactI18next).init({
    resources: { [lng]: { translation: strings } },
    lng,
    fallbackLng: DEFAULT_LANGUAGE, // when loaded; every locale is complete anyway
    supportedLngs: LANGUAGES.map((l) => l.id),
    interpolation: { escapeValue: false }, // React escapes
    returnNull: false,
  });
  return i18n;
}

export default i18n;
