import { describe, expect, it } from "vitest";
import { countChars, durationCostCents, formatMoney, perMinuteCents, ttsCostCents } from "../src/lib/pricing.js";

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

describe("durationCostCents (audio and video to text)", () => {
  const sst = { perSeconds: 100, unitAmount: 99, minAmount: 99 };
  const vtt = { perSeconds: 60, unitAmount: 99, minAmount: 99 };
  it.each([
    [0, 0],
    [1, 99], // the minimum
    [100, 99],
    [101, 100], // ceil(99 × 101 / 100) = ceil(99.99)
    [65, 99],
    [200, 198],
    [601, 595], // ceil(594.99)
    [3600, 3564],
  ])("audio: %i s cost %i cents", (s, cents) => expect(durationCostCents(s, sst)).toBe(cents));

  it.each([
    [0, 0],
    [30, 99],
    [60, 99],
    [61, 101], // ceil(99 × 61 / 60) = ceil(100.65)
    [120, 198],
    [10800, 17820],
  ])("video: %i s cost %i cents", (s, cents) => expect(durationCostCents(s, vtt)).toBe(cents));

  it("rounds a fractional duration up first and follows the configured numbers", () => {
    expect(durationCostCents(100.2, sst)).toBe(100);
    expect(durationCostCents(10, { perSeconds: 10, unitAmount: 50, minAmount: 0 })).toBe(50);
    expect(durationCostCents(10, null)).toBe(0);
  });

  it("gives the per-minute price of the rule", () => {
    expect(perMinuteCents(vtt)).toBe(99);
    expect(perMinuteCents(sst)).toBeCloseTo(59.4);
    expect(formatMoney(perMinuteCents(sst), "eur", "en")).toBe("€0.59");
  });
});
