// @vitest-environment node
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { blankText, countChars, formatMoney, perMinuteCents, priceCents } from "../src/lib/pricing.js";
import { CONFIG } from "./fixtures.js";

// The boundary cases the server's Rule.Amount passes too (api/orders/pricing_cases_test.go).
const TABLE = JSON.parse(readFileSync(new URL("../../api/orders/testdata/pricing_cases.json", import.meta.url), "utf8"));
const CASES = TABLE.cases;
const RULE_KEYS = ["minAmount", "per", "rounding", "unitAmount"];
const tts = CONFIG.tts.price;
const sst = CONFIG.sst.price;
const vtt = CONFIG.vtt.price;
const sameRule = (a, b) => RULE_KEYS.every((k) => a[k] === b[k]);

// The texts the server refuses as empty_text, and some it takes (api/orders/blank_text_cases_test.go).
const BLANK = JSON.parse(readFileSync(new URL("../../api/orders/testdata/blank_text_cases.json", import.meta.url), "utf8")).cases;

describe("blankText: the shared table api/orders/testdata/blank_text_cases.json", () => {
  it("holds cases of both kinds", () => {
    expect(BLANK.filter((c) => c.blank).length).toBeGreaterThan(3);
    expect(BLANK.filter((c) => !c.blank).length).toBeGreaterThan(3);
  });
  // Named with every character outside printable ASCII as \uXXXX, so the names can be read.
  const named = (s) => [...s].map((ch) => (/[!-~]/.test(ch) ? ch : `\\u${ch.codePointAt(0).toString(16).padStart(4, "0")}`)).join("");
  it.each(BLANK.map((c) => [`"${named(c.text)}"`, c.blank, c.text]))("%s is blank: %s", (_, blank, text) => {
    expect(blankText(text)).toBe(blank);
  });
});

describe("countChars", () => {
  it.each([
    ["", 0],
    ["a", 1],
    ["hello", 5],
    ["😀", 1], // one code point, two UTF-16 units
    ["👍🏽", 2], // emoji + skin-tone modifier: two code points
    ["你好", 2],
    ["こんにちは", 5],
    ["مرحبا", 5],
    ["𠜎𠜱", 2], // CJK extension B, outside the BMP
    ["e\u0301", 2], // e + combining accent: two code points, as the server counts
    ["a\nb", 3],
  ])("%j has %i code points", (text, n) => {
    expect(countChars(text)).toBe(n);
  });

  it("is not the UTF-16 length", () => {
    expect("😀".repeat(10).length).toBe(20);
    expect(countChars("😀".repeat(10))).toBe(10);
  });

  it("treats null and undefined as empty", () => {
    expect(countChars(null)).toBe(0);
    expect(countChars(undefined)).toBe(0);
  });
});

describe("priceCents: the shared table api/orders/testdata/pricing_cases.json", () => {
  it("holds well-formed cases with unique names", () => {
    expect(CASES.length).toBeGreaterThan(40);
    for (const c of CASES) {
      expect(Object.keys(c).sort(), c.name).toEqual(["amount", "name", "quantity", "rule"]);
      expect(Object.keys(c.rule).sort(), c.name).toEqual(RULE_KEYS);
      expect(["started", "proportional"], c.name).toContain(c.rule.rounding);
      expect(Number.isSafeInteger(c.quantity) && Number.isSafeInteger(c.amount), c.name).toBe(true);
    }
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.each(CASES.map((c) => [c.name, c]))("%s", (_, c) => {
    expect(priceCents(c.quantity, c.rule)).toBe(c.amount);
  });

  it("covers the rules the fixtures publish (the server's defaults) at 0, 1, per-1, per and per+1", () => {
    for (const rule of [tts, sst, vtt]) {
      const quantities = CASES.filter((c) => sameRule(c.rule, rule)).map((c) => c.quantity);
      expect(quantities).toEqual(expect.arrayContaining([0, 1, rule.per - 1, rule.per, rule.per + 1]));
    }
  });
});

describe("priceCents in the pages' use", () => {
  it("prices text by code points at the block boundary", () => {
    expect(priceCents(countChars("😀".repeat(1000)), tts)).toBe(99);
    expect(priceCents(countChars("字".repeat(1001)), tts)).toBe(198);
  });

  it("follows the published rounding: an operator's proportional text price is not rounded per block", () => {
    const rule = { unitAmount: 150, per: 1000, rounding: "proportional", minAmount: 0 };
    expect(priceCents(1500, rule)).toBe(225);
    expect(priceCents(1500, { ...rule, rounding: "started" })).toBe(300);
  });

  it("rounds a fractional duration up to whole seconds first", () => {
    expect(priceCents(100.2, sst)).toBe(100); // 101 s
    expect(priceCents(60.01, { ...vtt, rounding: "started", minAmount: 0 })).toBe(198); // 61 s: two started minutes
  });

  it("prices nothing without a usable rule", () => {
    expect(priceCents(10, null)).toBe(0);
    expect(priceCents(10, undefined)).toBe(0);
    expect(priceCents(10, { ...tts, per: 0 })).toBe(0);
    expect(priceCents(10, { ...tts, unitAmount: undefined })).toBe(0);
    expect(priceCents(10, { ...tts, unitAmount: 1.5 })).toBe(0);
  });

  it("treats a missing minimum as none, like the server", () => {
    expect(priceCents(1, { unitAmount: 99, per: 1000, rounding: "started" })).toBe(99);
  });
});

describe("formatMoney", () => {
  it("shows cents as euros", () => {
    expect(formatMoney(99, "eur", "en")).toBe("€0.99");
    expect(formatMoney(198, "eur", "en")).toBe("€1.98");
    expect(formatMoney(9900, "eur", "en")).toBe("€99.00");
  });
  it("uses the locale's conventions", () => {
    expect(formatMoney(99, "eur", "es").replace(/\s/g, " ")).toBe("0,99 €");
  });
});

describe("perMinuteCents", () => {
  it("is the rate of a proportional rule", () => {
    expect(perMinuteCents(vtt)).toBe(99);
    expect(perMinuteCents(sst)).toBeCloseTo(59.4);
    expect(formatMoney(perMinuteCents(sst), "eur", "en")).toBe("€0.59");
  });

  it("is the price of 60 seconds, before any minimum, under a per-started-unit rule", () => {
    const started = (per, minAmount = 0) => ({ unitAmount: 50, per, rounding: "started", minAmount });
    expect(perMinuteCents(started(60))).toBe(50);
    expect(perMinuteCents(started(30))).toBe(100);
    expect(perMinuteCents(started(100))).toBe(50); // one started 100-second block
    expect(perMinuteCents(started(45, 500))).toBe(100); // two started blocks; the minimum is stated apart
  });

  it("is zero without a usable rule", () => {
    expect(perMinuteCents(null)).toBe(0);
    expect(perMinuteCents({ ...sst, per: 0 })).toBe(0);
  });
});
