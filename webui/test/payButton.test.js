import { describe, expect, it } from "vitest";
import { canPayTranscription, canPayTts } from "../src/lib/payButton.js";

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
    ["a text of white space alone (the server's empty_text)", { blank: true }],
  ])("refuses with %s", (_, change) => {
    expect(canPayTts({ ...ok, ...change })).toBe(false);
  });
  it("accepts a text of exactly the maximum", () => {
    expect(canPayTts({ ...ok, chars: 100000, costCents: 9900 })).toBe(true);
  });
});

describe("canPayTranscription (the transcription pages' pay rule)", () => {
  const ok = { costCents: 99, email: "a@example.com", emailVerify: "a@example.com" };
  it("offers payment when the quote exists and the e-mails are filled and equal", () => {
    expect(canPayTranscription(ok)).toBe(true);
  });
  it.each([
    ["no quote yet", { costCents: 0 }],
    ["no e-mail", { email: "", emailVerify: "" }],
    ["unverified e-mail", { emailVerify: "" }],
    ["different e-mails", { emailVerify: "b@example.com" }],
  ])("refuses with %s", (_, change) => expect(canPayTranscription({ ...ok, ...change })).toBe(false));
});
