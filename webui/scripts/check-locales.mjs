// Checks that every locale in src/locales/<lng>/translation.json holds exactly
// the keys of en, with non-empty strings and the same {{placeholders}}.
// Run by `npm run check:locales` (CI) and by test/locales.test.js.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const LOCALES_DIR = join(dirname(fileURLToPath(import.meta.url)), "../src/locales");

/** Flattens nested objects into {"a.b.c": "text"}. */
export function flatten(obj, prefix = "", out = {}) {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === "object" && !Array.isArray(v)) flatten(v, key, out);
    else out[key] = v;
  }
  return out;
}

const placeholders = (s) => [...String(s).matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).filter((v, i, a) => a.indexOf(v) === i).sort().join(",");

/** Loads every locale: {lng: flatKeys}. */
export function loadLocales(dir = LOCALES_DIR) {
  const out = {};
  for (const lng of readdirSync(dir)) {
    out[lng] = flatten(JSON.parse(readFileSync(`${dir}/${lng}/translation.json`, "utf8")));
  }
  return out;
}

/** The problems found, as human-readable lines (empty when all is well). */
export function checkLocales(locales = loadLocales()) {
  const problems = [];
  const en = locales.en;
  if (!en) return ["missing locale en"];
  for (const [lng, keys] of Object.entries(locales)) {
    for (const k of Object.keys(en)) {
      if (!(k in keys)) problems.push(`${lng}: missing key ${k}`);
      else if (typeof keys[k] !== "string" || keys[k].trim() === "") problems.push(`${lng}: empty value for ${k}`);
      else if (placeholders(keys[k]) !== placeholders(en[k])) problems.push(`${lng}: placeholders of ${k} differ from en`);
    }
    for (const k of Object.keys(keys)) if (!(k in en)) problems.push(`${lng}: extra key ${k} (not in en)`);
  }
  return problems;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const locales = loadLocales();
  const problems = checkLocales(locales);
  for (const p of problems) console.error(p);
  const n = Object.keys(locales.en || {}).length;
  console.log(`${Object.keys(locales).length} locales, ${n} keys each: ${problems.length ? `${problems.length} problem(s)` : "ok"}`);
  process.exit(problems.length ? 1 : 0);
}
