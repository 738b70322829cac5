import { describe, expect, it } from "vitest";
import { countChars, formatMoney, ttsCostCents } from "../src/lib/pricing.js";

const price = { unitChars: 1000, unitAmount: 99 };

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

describe("ttsCostCents", () => {
  it.each([
    [0, 0],
    [1, 99],
    [999, 99],
    [1000, 99],
    [1001, 198],
    [2000, 198],
    [2001, 297],
    [100000, 9900],
  ])("%i characters cost %i cents", (chars, cents) => {
    expect(ttsCostCents(chars, price)).toBe(cents);
  });

  it("follows the configured price, not constants", () => {
    expect(ttsCostCents(1, { unitChars: 500, unitAmount: 50 })).toBe(50);
    expect(ttsCostCents(501, { unitChars: 500, unitAmount: 50 })).toBe(100);
  });

  it("counts emoji and CJK text by code points at the boundary", () => {
    expect(ttsCostCents(countChars("😀".repeat(1000)), price)).toBe(99);
    expect(ttsCostCents(countChars("字".repeat(1001)), price)).toBe(198);
  });

  it("is zero without a usable price", () => {
    expect(ttsCostCents(10, null)).toBe(0);
    expect(ttsCostCents(10, { unitChars: 0, unitAmount: 99 })).toBe(0);
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
