import { describe, expect, it } from "vitest";
import { formatSpeed, parseSpeed } from "../src/lib/speed.js";

describe("formatSpeed", () => {
  it.each([
    [1, "1.00"],
    [0.25, "0.25"],
    [4, "4.00"],
    [1.5, "1.50"],
    [1.13, "1.13"],
  ])("%s → %s", (v, s) => expect(formatSpeed(v)).toBe(s));
});

describe("parseSpeed", () => {
  const range = { min: 0.25, max: 4 };
  it("rounds slider values to hundredths", () => {
    expect(parseSpeed("1.1300000000000001", range)).toBe(1.13);
    expect(parseSpeed("0.999", range)).toBe(1);
  });
  it("keeps the value within the range", () => {
    expect(parseSpeed("0.1", range)).toBe(0.25);
    expect(parseSpeed("9", range)).toBe(4);
  });
  it("falls back to 1 for garbage", () => {
    expect(parseSpeed("abc", range)).toBe(1);
  });
});
