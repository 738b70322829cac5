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

// English names of languages that Intl.DisplayNames may not know (espeak-ng's
// constructed, historical and minority languages), used when it names none.
const OTHER_NAMES = {
  bpy: "Bishnupriya Manipuri", grc: "Ancient Greek", hak: "Hakka Chinese", hyw: "Western Armenian",
  jbo: "Lojban", lfn: "Lingua Franca Nova", ltg: "Latgalian", nci: "Classical Nahuatl", nog: "Nogai",
  piqd: "Klingon", py: "Pyash", qdb: "Lang Belta", qya: "Quenya", sjn: "Sindarin", smj: "Lule Sami",
};

/**
 * The languages `codes` (default: all of the above) as {code, name}, named in
 * `locale` and sorted for it. An unknown code keeps its English name or the code.
 */
export function languageOptions(locale, codes = Object.keys(INPUT_LANGUAGES)) {
  let dn = null;
  try {
    dn = new Intl.DisplayNames([locale], { type: "language" });
  } catch {
    /* no Intl.DisplayNames: English names */
  }
  const name = (code) => {
    let n = null;
    try {
      n = dn?.of(code);
    } catch {
      /* not a valid language code */
    }
    return n && n !== code ? n : INPUT_LANGUAGES[code] || OTHER_NAMES[code] || code;
  };
  const collator = new Intl.Collator(locale);
  return codes.map((code) => ({ code, name: name(code) })).sort((a, b) => collator.compare(a.name, b.name));
}

/** The language names of `codes` in `locale`, sorted for that locale. */
export function inputLanguageNames(locale, codes) {
  return languageOptions(locale, codes).map((l) => l.name);
}
