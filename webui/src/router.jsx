import { useSyncExternalStore } from "react";

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

const getPath = () => window.location.pathname;

/** The current path; re-renders on navigation. */
export function usePath() {
  return useSyncExternalStore(subscribe, getPath, getPath);
}

/** Goes to `to` (path plus optional query) without reloading the page. */
export function navigate(to, { replace = false } = {}) {
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
    <a href={to} onClick={onClick} className={cls} aria-current={active && activeClassName ? "page" : undefined} {...rest}>
      {children}
    </a>
  );
}
