import { afterEach, describe, expect, it, vi } from "vitest";
import { languageOptions, CONSTRUCTED } from "../src/lib/inputLanguages.js";
import { LANGUAGES } from "../src/languages.js";
import { loadLocales } from "../scripts/check-locales.mjs";

// espeak-ng 1.51's languages, as /api/config lists them for that engine.
const ESPEAK = "af am an ar as az ba be bg bn bpy bs ca chr cs cv cy da de el en eo es et eu fa fi fr ga gd gn grc gu hak haw he hi hr ht hu hy hyw ia id io is it ja jbo ka kk kl kn ko kok ku ky la lb lfn lt ltg lv mi mk ml mr ms mt my nb nci ne nl nog om or pa pap piqd pl pt py qdb qu quc qya ro ru sd shn si sjn sk sl smj sq sr sv sw ta te th tk tn tr tt ug uk ur uz vi yue zh".split(" ");

const LOCALES = loadLocales();
/** The locale file's languageNames of an interface language. */
const namesOf = (id) =>
  Object.fromEntries(
    Object.entries(LOCALES[id])
      .filter(([k]) => k.startsWith("languageNames."))
      .map(([k, v]) => [k.slice("languageNames.".length), v]),
  );

describe("the engine's language list", () => {
  afterEach(() => vi.unstubAllGlobals());

  for (const { id, tag } of LANGUAGES) {
    it(`in ${id}: every language named, none constructed, sorted for the language`, () => {
      const options = languageOptions(tag, ESPEAK, namesOf(id));
      const codes = options.map((o) => o.code);
      for (const c of ["piqd", "qya", "sjn", "jbo", "py"]) expect(codes).not.toContain(c);
      expect(codes).toContain("eo"); // Esperanto: a constructed language people speak
      expect(options.length).toBe(ESPEAK.length - ESPEAK.filter((c) => CONSTRUCTED.has(c)).length);
      for (const o of options) expect(o.name, o.code).not.toBe(o.code);
      const names = options.map((o) => o.name);
      expect(names).toEqual([...names].sort(new Intl.Collator(tag).compare));
    });
  }

  it("takes a name from the locale file where the browser's Intl names none", () => {
    // A browser whose ICU data names only a few languages (Chromium names no Bashkir).
    const Real = Intl.DisplayNames;
    class Sparse extends Real {
      of(code) {
        return ["es", "ru"].includes(code) ? super.of(code) : undefined;
      }
    }
    vi.stubGlobal("Intl", { ...Intl, DisplayNames: Sparse, Collator: Intl.Collator });
    for (const { id, tag } of LANGUAGES) {
      const names = namesOf(id);
      const options = Object.fromEntries(languageOptions(tag, ["ba", "cv", "kl", "pap", "quc", "shn", "grc", "hak", "es"], names).map((o) => [o.code, o.name]));
      expect(options.es).toBe(new Real([tag], { type: "language" }).of("es"));
      for (const c of ["ba", "cv", "kl", "pap", "quc", "shn", "grc", "hak"]) {
        expect(options[c], `${id} ${c}`).toBe(names[c]);
        if (id !== "en") expect(options[c], `${id} ${c} in English`).not.toBe(namesOf("en")[c]);
      }
    }
  });

  it("names a list once: the same languages in the same locale are not named again", () => {
    const spy = vi.spyOn(Intl, "DisplayNames");
    const first = languageOptions("es-MX", ESPEAK, namesOf("es"));
    const again = languageOptions("es-MX", [...ESPEAK], { ...namesOf("es") });
    expect(again).toBe(first);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(languageOptions("ru-RU", ESPEAK, namesOf("ru"))).not.toBe(first);
    spy.mockRestore();
  });
});
