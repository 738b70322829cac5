// Prints the gzipped size of the JavaScript the first page loads: the entry
// script of dist/index.html plus the chunks it preloads. Run after
// `npm run build`. Exits non-zero above the budget (150 KB).
import { readFileSync, readdirSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const DIST = fileURLToPath(new URL("../dist/", import.meta.url));
const BUDGET = 150 * 1024;

const html = readFileSync(`${DIST}index.html`, "utf8");
const first = [...html.matchAll(/(?:src|href)="\/?(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
const gz = (f) => gzipSync(readFileSync(`${DIST}${f}`), { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

let total = 0;
for (const f of first) {
  const n = gz(f);
  total += n;
  console.log(`first page  ${f.padEnd(40)} ${kb(n)} gzipped`);
}
for (const f of readdirSync(`${DIST}assets`).filter((f) => f.endsWith(".js") && !first.includes(`assets/${f}`))) {
  console.log(`on demand   ${`assets/${f}`.padEnd(40)} ${kb(gz(`assets/${f}`))} gzipped`);
}
console.log(`first-page JS: ${kb(total)} gzipped (budget ${kb(BUDGET)})`);
process.exit(total > BUDGET ? 1 : 0);
