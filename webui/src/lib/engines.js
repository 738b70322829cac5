// Display names of the speech-to-text engines the server reports (config sst.engine / vtt.engine).
const ENGINE_NAMES = { whisper: "whisper.cpp", openai: "OpenAI" };

/** The name shown on the provider line; an unknown engine id is shown as it is. */
export function engineName(id) {
  return ENGINE_NAMES[id] || String(id || "");
}

/** Items as one phrase in locale ("English and Spanish"); joined by commas without Intl.ListFormat. */
export function listOf(items, locale) {
  try {
    return new Intl.ListFormat(locale, { type: "conjunction" }).format(items);
  } catch {
    return items.join(", ");
  }
}

/**
 * Which speech engine reads which languages, said to the visitor: one sentence per
 * engine of readers (the server's [{engine, languages}], several engines only), the
 * languages named by nameOf. "" without readers.
 * @param {(key: string, opts: object) => string} t
 * @param {{engine: string, languages: string[]}[] | undefined} readers
 * @param {(code: string) => string} nameOf
 * @param {string} locale
 */
export function readersText(t, readers, nameOf, locale) {
  return (readers || []).map((r) => t("tts.engineReads", { engine: r.engine, languages: listOf(r.languages.map(nameOf), locale) })).join(" ");
}

/** The engine of each language code in readers ({code: engine}); empty without readers. */
export function engineOf(readers) {
  return Object.fromEntries((readers || []).flatMap((r) => r.languages.map((l) => [l, r.engine])));
}
