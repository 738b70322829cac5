// @vitest-environment node
import { describe, expect, it } from "vitest";
import { checkLocales, flatten, loadLocales } from "../scripts/check-locales.mjs";

describe("locales", () => {
  const locales = loadLocales();

  it("has the six interface languages", () => {
    expect(Object.keys(locales).sort()).toEqual(["ar", "en", "es", "jp", "ru", "zh"]);
  });

  it("every locale has exactly the keys of en, filled, with the same placeholders", () => {
    expect(checkLocales(locales)).toEqual([]);
  });

  it("detects a missing, an extra and a broken key", () => {
    const en = { a: "x {{n}}", b: "y" };
    const problems = checkLocales({ en, xx: { a: "x", c: "z" } });
    expect(problems).toEqual([
      "xx: placeholders of a differ from en",
      "xx: missing key b",
      "xx: extra key c (not in en)",
    ]);
  });

  it("translates: other locales do not repeat the English texts", () => {
    const en = locales.en;
    // Product and format names may stay as they are.
    const same = (lng) =>
      Object.keys(en).filter((k) => locales[lng][k] === en[k] && !["app.title", "nav.api"].includes(k));
    for (const lng of ["jp", "es", "ru", "zh", "ar"]) expect(same(lng), lng).toEqual([]);
  });

  it("names a control with its visible text (WCAG 2.5.3, label in name)", () => {
    // A control whose accessible name (aria-label) differs from its visible text: the name
    // holds the visible words, so a speech-input user can say what they see.
    const pairs = [
      ["tts.samplePlay", "tts.samplePlayShort"],
      ["tts.samplePause", "tts.samplePauseShort"],
    ];
    for (const [lng, texts] of Object.entries(locales)) {
      const flat = flatten(texts);
      for (const [name, visible] of pairs) expect(flat[name], `${lng} ${name}`).toContain(flat[visible]);
    }
  });

  it("flattens nested keys", () => {
    expect(flatten({ a: { b: "1", c: { d: "2" } } })).toEqual({ "a.b": "1", "a.c.d": "2" });
  });
});

describe("API error codes", () => {
  // The codes of the API contract (api/README.md) that reach the UI.
  const CONTRACT = [
    "invalid_json", "invalid_voice", "invalid_format", "invalid_speed", "empty_text", "text_too_long",
    "invalid_email", "email_mismatch", "invalid_locale", "price_mismatch", "service_unavailable",
    "rate_limited", "payment_provider_error", "missing_session", "session_not_found", "wrong_service",
    "payment_required", "order_refunded", "order_expired", "link_expired", "not_found",
    // audio upload, video analysis and their checkouts
    "no_file", "too_many_files", "invalid_upload", "empty_file", "file_too_large", "not_audio",
    "unreadable_audio", "upload_not_found", "invalid_language", "empty_link", "unsupported_link",
    "forbidden_address", "not_media", "live_stream", "video_unavailable", "video_too_long",
    "source_unreachable",
    // the transcription preview (issue 46)
    "preview_budget_spent", "preview_unavailable", "preview_failed",
  ];
  it("every code of the contract has a translation", () => {
    const en = flatten(loadLocales().en);
    expect(CONTRACT.filter((c) => !(`errors.${c}` in en))).toEqual([]);
  });
});

describe("plural keys", () => {
  it("are checked in each language's own plural forms", () => {
    const en = { n_one: "{{count}} thing", n_other: "{{count}} things" };
    expect(checkLocales({ en, ru: { n_one: "{{count}} вещь", n_few: "{{count}} вещи", n_many: "{{count}} вещей", n_other: "{{count}} вещи" } })).toEqual([]);
    expect(checkLocales({ en, zh: { n_other: "{{count}} 个" } })).toEqual([]);
    expect(checkLocales({ en, ru: { n_one: "{{count}} вещь", n_other: "{{count}} вещи" } })).toEqual(["ru: missing key n_few", "ru: missing key n_many"]);
    expect(checkLocales({ en, zh: { n_one: "{{count}} 个", n_other: "{{count}} 个" } })).toEqual(["zh: extra key n_one (not in en)"]);
    expect(checkLocales({ en, ar: { n_other: "x" } })).toEqual(expect.arrayContaining(["ar: missing key n_zero", "ar: missing key n_two", "ar: placeholders of n_other differ from en"]));
  });
});
