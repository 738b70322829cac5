import { useSyncExternalStore } from "react";
import { DEFAULT_LANGUAGE, LANGUAGES, languageCode } from "./languages.js";

// A tiny history router: the site has a handful of fixed paths, so a full
// router library would only add weight to the first page.

const NAV_EVENT = "parla:navigate";

function subscribe(cb) {
  window.addEventListener("popstate", cb);
  window.addEventListener(NAV_EVENT, cb);
  return () => {
    window.removeEventListener("popstate", cb);
    window.removeEventListener(NAV_EVENT, cb);
  };
}

// Every page has an address per language: /tts is English, /es/tts Spanish. The
// segment is the BCP 47 code (ja, not the interface id jp), as the server renders it
// (api/pages.go) and names it in hreflang; English, the default, has none.
const SEGMENT_RE = new RegExp(
  `^/(${LANGUAGES.filter((l) => l.id !== DEFAULT_LANGUAGE)
    .map((l) => languageCode(l.id))
    .join("|")})(?=/|$)`,
);

/** Splits a pathname into its interface language ("en" when unprefixed) and the route. */
export function splitPath(pathname) {
  const m = SEGMENT_RE.exec(pathname);
  if (!m) return { lang: "en", path: pathname || "/" };
  return { lang: languageCode(m[1], true), path: pathname.slice(m[0].length) || "/" };
}

/** The address of `to` (path plus optional query/hash) in the language `lng` (an interface id). */
export function addressOf(to, lng) {
  const i = to.search(/[?#]/);
  const path = i < 0 ? to : to.slice(0, i);
  const rest = i < 0 ? "" : to.slice(i);
  if (lng === DEFAULT_LANGUAGE || !LANGUAGES.some((l) => l.id === lng)) return path + rest;
  const seg = languageCode(lng);
  return (path === "/" ? `/${seg}` : `/${seg}${path}`) + rest;
}

/** `to` in the language of the current address, unless it already names one. */
function localize(to) {
  if (!to.startsWith("/") || SEGMENT_RE.test(to)) return to;
  return addressOf(to, splitPath(window.location.pathname).lang);
}

// The snapshot is the whole pathname, so links re-render when only the language changes.
const getPathname = () => window.location.pathname;

/** The current route, without its language segment; re-renders on navigation. */
export function usePath() {
  return splitPath(useSyncExternalStore(subscribe, getPathname, getPathname)).path;
}

/**
 * Goes to `to` (path plus optional query) in the current language, or in `lang` (an
 * interface id) when given, without reloading the page.
 * @param {string} to
 * @param {{replace?: boolean, lang?: string}} [opts]
 */
export function navigate(to, { replace = false, lang } = {}) {
  to = lang ? addressOf(to, lang) : localize(to);
  if (replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  window.scrollTo?.(0, 0);
  window.dispatchEvent(new Event(NAV_EVENT));
}

/** An <a> that navigates in-app; modified clicks (new tab…) stay native. */
export function Link({ to, children, activeClassName, className = "", ...rest }) {
  const path = usePath();
  const active = path === to;
  const onClick = (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    if (!active) navigate(to);
  };
  const cls = [className, active && activeClassName].filter(Boolean).join(" ") || undefined;
  return (
    <a href={localize(to)} onClick={onClick} className={cls} aria-current={active && activeClassName ? "page" : undefined} {...rest}>
      {children}
    </a>
  );
}
