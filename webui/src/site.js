// What the server writes into every page (api/pages.go, <meta name="parla:site">): the
// contact address, the version and the retention numbers, so the footer and the privacy
// page need no second request. Empty when the page was not served by Parla (vite dev).
let cached;

/** The server-rendered site facts: { contact, version, retention }. */
export function siteInfo() {
  if (cached) return cached;
  try {
    cached = JSON.parse(document.head.querySelector('meta[name="parla:site"]')?.content || "{}");
  } catch {
    cached = {};
  }
  return cached;
}
