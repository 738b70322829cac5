// Checks that every locale in src/locales/<lng>/translation.json holds exactly
// the keys of en, with non-empty strings and the same {{placeholders}}. A key
// that en writes in plural forms (i18next's key_one, key_other, …) must come in
// exactly the plural forms of each locale's own language, as i18next picks
// them (Intl.PluralRules of the locale's code: ru one/few/many/other, ar
// zero/one/two/few/many/other, zh other; "jp" is not a language tag that Intl
// knows, so i18next, and this check, use the default rules one/other for it).
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

const PLURAL = /_(zero|one|two|few|many|other)$/;

/** The plural categories i18next uses for a locale code. */
export function pluralForms(lng) {
  try {
    return new Intl.PluralRules(lng).resolvedOptions().pluralCategories;
  } catch {
    return ["one", "other"];
  }
}

/** en's keys as a locale must hold them: plural keys in that locale's forms, each checked against en's _other. */
function expectedKeys(en, lng) {
  const out = {};
  for (const k of Object.keys(en)) {
    const base = k.replace(PLURAL, "");
    if (base !== k && `${base}_other` in en) {
      for (const form of pluralForms(lng)) out[`${base}_${form}`] = en[`${base}_other`];
    } else out[k] = en[k];
  }
  return out;
}

/** The problems found, as human-readable lines (empty when all is well). */
export function checkLocales(locales = loadLocales()) {
  const problems = [];
  if (!locales.en) return ["missing locale en"];
  for (const [lng, keys] of Object.entries(locales)) {
    const en = expectedKeys(locales.en, lng);
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
