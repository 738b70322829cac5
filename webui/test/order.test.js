import { describe, expect, it } from "vitest";
import { canPayTts } from "../src/lib/order.js";

const ok = { costCents: 99, chars: 5, maxChars: 100000, email: "a@example.com", emailVerify: "a@example.com" };

describe("canPayTts (the pay section's conditions)", () => {
  it("offers payment when cost > 0 and the e-mails are filled and equal", () => {
    expect(canPayTts(ok)).toBe(true);
  });
  it.each([
    ["no cost (no text)", { costCents: 0, chars: 0 }],
    ["empty e-mail", { email: "", emailVerify: "" }],
    ["unverified e-mail", { emailVerify: "" }],
    ["different e-mails", { emailVerify: "b@example.com" }],
    ["text above the maximum", { chars: 100001, costCents: 9999 }],
  ])("refuses with %s", (_, change) => {
    expect(canPayTts({ ...ok, ...change })).toBe(false);
  });
  it("accepts a text of exactly the maximum", () => {
    expect(canPayTts({ ...ok, chars: 100000, costCents: 9900 })).toBe(true);
  });
});
