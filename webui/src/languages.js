import languages from "./languages.json";

// The interface languages, read from languages.json, the one list the Go server reads too
// (webui/embed.go, providers/texts/languages.go). `id` is the product's own code (spec: en,
// jp, es, ru, zh, ar); `tag` is the BCP 47 tag for <html lang>, Intl and og:locale; `hreflang` is the
// language's code in addresses (/ja/tts) and in hreflang.
/** @type {{id: string, tag: string, hreflang: string, og: string, name: string, rtl?: boolean}[]} */
export const LANGUAGES = languages;

export const DEFAULT_LANGUAGE = "en";

export function languageById(id) {
  return LANGUAGES.find((l) => l.id === id) || LANGUAGES[0];
}

/**
 * The one translation between the interface's codes and language codes: an interface id
 * (jp) to its language's code (ja), and with `back` a language code to its interface id
 * ("" when no interface language has it).
 * @param {string} code
 * @param {boolean} [back]
 */
export function languageCode(code, back = false) {
  if (back) return LANGUAGES.find((l) => l.hreflang === code)?.id || "";
  return LANGUAGES.find((l) => l.id === code)?.hreflang || code;
}
