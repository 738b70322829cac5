import { createContext, useContext } from "react";

// The server's public configuration (GET /api/config), loaded once at start.
export const ConfigContext = createContext(null);

/**
 * The configuration the server wrote into the page (api/spa.go: a JSON script element
 * with GET /api/config's object), so the first paint has the page's shape; null when the
 * page has none (vite dev, tests) or it cannot be read, and the app asks /api/config.
 */
export function inlineConfig() {
  try {
    const el = document.getElementById("parla-config");
    return el ? JSON.parse(el.textContent) : null;
  } catch {
    return null;
  }
}

/** The loaded /api/config object. */
export function useConfig() {
  return useContext(ConfigContext);
}
