// Prints the gzipped JavaScript each service page and the home page load before their
// first paint, in every interface language: the entry script of dist/index.html, and what
// the server's page preloads with it (api/preload.go: the page language's strings and the
// route's screen, pages.json's "screen", with the chunks it imports, from Vite's manifest).
// Run after `npm run build` (DIST=<folder> measures another build). Exits non-zero when a
// page's total is above the budget (150 KB).
import { existsSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const DIST = process.env.DIST ? `${process.env.DIST.replace(/\/$/, "")}/` : fileURLToPath(new URL("../dist/", import.meta.url));
const BUDGET = 150 * 1024;
const PAGES = JSON.parse(readFileSync(new URL("../src/pages.json", import.meta.url), "utf8"));
const LANGUAGES = JSON.parse(readFileSync(new URL("../src/languages.json", import.meta.url), "utf8"));
const ROUTES = ["/", "/tts", "/sst", "/vtt"];

const html = readFileSync(`${DIST}index.html`, "utf8");
const entry = [...html.matchAll(/(?:src|href)="\/?(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
const manifestPath = `${DIST}.vite/manifest.json`;
const manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, "utf8")) : {};
const gz = (f) => gzipSync(readFileSync(`${DIST}${f}`), { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

/** The chunks of modules and of what they import, each once; the entry's left out (as api/preload.go). */
export function closure(modules) {
  const out = [];
  const seen = new Set();
  const walk = (key) => {
    const c = manifest[key];
    if (!c || seen.has(key) || c.isEntry) return;
    seen.add(key);
    out.push(c.file);
    for (const i of c.imports || []) walk(i);
  };
  modules.forEach(walk);
  return out;
}

const entryBytes = entry.reduce((n, f) => n + gz(f), 0);
console.log(`entry ${entry.join(" ")}: ${kb(entryBytes)} gzipped`);
let worst = 0;
for (const route of ROUTES) {
  const row = LANGUAGES.map(({ id }) => {
    const files = closure([`src/locales/${id}/translation.json`, PAGES[route].screen].filter(Boolean));
    const total = entryBytes + files.reduce((n, f) => n + gz(f), 0);
    worst = Math.max(worst, total);
    return `${id} ${kb(total)}`;
  });
  console.log(`${route.padEnd(5)} ${row.join("  ")}`);
}
console.log(`largest first-load JS: ${kb(worst)} gzipped (budget ${kb(BUDGET)})`);
process.exit(worst > BUDGET ? 1 : 0);
