// The interface languages. `id` is the product's own code (spec: en, jp, es,
// ru, zh, ar); `tag` is the BCP 47 tag for <html lang>, Intl and og:locale.
export const LANGUAGES = [
  { id: "en", tag: "en", og: "en_US", name: "English" },
  { id: "jp", tag: "ja", og: "ja_JP", name: "日本語" },
  { id: "es", tag: "es", og: "es_ES", name: "Español" },
  { id: "ru", tag: "ru", og: "ru_RU", name: "Русский" },
  { id: "zh", tag: "zh-CN", og: "zh_CN", name: "简体中文" },
  { id: "ar", tag: "ar", og: "ar_AR", name: "العربية", rtl: true },
];

export const DEFAULT_LANGUAGE = "en";

export function languageById(id) {
  return LANGUAGES.find((l) => l.id === id) || LANGUAGES[0];
}
