import { describe, expect, it } from "vitest";
import { emailsMismatch, emailsReady } from "../src/lib/email.js";

describe("emailsMismatch (the warning)", () => {
  it.each([
    ["", "", false],
    ["a@example.com", "", false],
    ["", "a@example.com", false],
    ["a@example.com", "a@example.com", false],
    ["a@example.com", "b@example.com", true],
    ["a@example.com", "A@example.com", true], // no normalization: must be equal
    ["a@example.com", "a@example.co", true],
  ])("%j vs %j → %s", (a, b, want) => {
    expect(emailsMismatch(a, b)).toBe(want);
  });
});

describe("emailsReady", () => {
  it.each([
    ["", "", false],
    ["a@example.com", "", false],
    ["a@example.com", "b@example.com", false],
    ["a@example.com", "a@example.com", true],
  ])("%j and %j → %s", (a, b, want) => {
    expect(emailsReady(a, b)).toBe(want);
  });
});
