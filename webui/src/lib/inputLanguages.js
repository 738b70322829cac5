import { useMemo } from "react";
import { useTranslation } from "react-i18next";

// The input languages of the speech engine (OpenAI's supported list, the
// same 57 for text-to-speech and transcription), as ISO 639 codes. Their
// names are produced in the visitor's language by Intl.DisplayNames, so no
// locale file has to carry 57 names; English names are the fallback.
export const INPUT_LANGUAGES = {
  af: "Afrikaans", ar: "Arabic", hy: "Armenian", az: "Azerbaijani", be: "Belarusian",
  bs: "Bosnian", bg: "Bulgarian", ca: "Catalan", zh: "Chinese", hr: "Croatian",
  cs: "Czech", da: "Danish", nl: "Dutch", en: "English", et: "Estonian",
  fi: "Finnish", fr: "French", gl: "Galician", de: "German", el: "Greek",
  he: "Hebrew", hi: "Hindi", hu: "Hungarian", is: "Icelandic", id: "Indonesian",
  it: "Italian", ja: "Japanese", kn: "Kannada", kk: "Kazakh", ko: "Korean",
  lv: "Latvian", lt: "Lithuanian", mk: "Macedonian", ms: "Malay", mr: "Marathi",
  mi: "Maori", ne: "Nepali", no: "Norwegian", fa: "Persian", pl: "Polish",
  pt: "Portuguese", ro: "Romanian", ru: "Russian", sr: "Serbian", sk: "Slovak",
  sl: "Slovenian", es: "Spanish", sw: "Swahili", sv: "Swedish", tl: "Tagalog",
  ta: "Tamil", th: "Thai", tr: "Turkish", uk: "Ukrainian", ur: "Urdu",
  vi: "Vietnamese", cy: "Welsh",
};

// Constructed and fictional languages that espeak-ng speaks but a paid product does not
// offer in its list (Klingon, Quenya, Sindarin, Pyash, Lang Belta; Lojban, Ido,
// Interlingua, Lingua Franca Nova). An order may still name one by its code. Esperanto
// stays: a constructed language with a living community of speakers, which visitors write.
export const CONSTRUCTED = new Set(["piqd", "qya", "sjn", "py", "qdb", "jbo", "io", "ia", "lfn"]);

/**
 * The languages `codes` (default: all of the above) as {code, name}, named in `locale` and
 * sorted for it, constructed and fictional ones left out. A name comes from
 * Intl.DisplayNames, else from `names` (the locale file's languageNames: the languages
 * some browsers do not name), else English, else the code.
 * @param {string} locale a BCP 47 tag
 * @param {string[]} [codes]
 * @param {Record<string, string>} [names]
 */
export function languageOptions(locale, codes = Object.keys(INPUT_LANGUAGES), names = {}) {
  // The /tts page names the same ~110 languages twice (the list and the select); naming
  // them costs a phone tens of milliseconds of blocking each time, so once is kept.
  const key = JSON.stringify([locale, codes, names]);
  let options = named.get(key);
  if (!options) {
    options = nameLanguages(locale, codes, names);
    if (named.size >= 12) named.clear();
    named.set(key, options);
  }
  return options;
}

/** languageOptions' answers (a dozen at most), by their arguments. */
const named = new Map();

function nameLanguages(locale, codes, names) {
  let dn = null;
  try {
    dn = new Intl.DisplayNames([locale], { type: "language", fallback: "none" });
  } catch {
    /* no Intl.DisplayNames: the locale file's and English names */
  }
  const name = (code) => {
    let n = null;
    try {
      n = dn?.of(code);
    } catch {
      /* not a valid language code */
    }
    return n && n !== code ? n : names[code] || INPUT_LANGUAGES[code] || code;
  };
  const collator = new Intl.Collator(locale);
  return codes
    .filter((code) => !CONSTRUCTED.has(code))
    .map((code) => ({ code, name: name(code) }))
    .sort((a, b) => collator.compare(a.name, b.name));
}

/** languageOptions for the interface's language, with its locale file's names. */
export function useLanguageOptions(locale, codes) {
  const { t } = useTranslation();
  const names = /** @type {Record<string, string>} */ (t("languageNames", { returnObjects: true }));
  return useMemo(() => languageOptions(locale, codes, names), [locale, codes, names]);
}
