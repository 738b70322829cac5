import { emailsReady } from "./email.js";

/**
 * Whether the pay section of the text-to-speech page offers the pay button:
 * a cost above zero, a text within the configured maximum and a confirmed
 * e-mail address (spec section 4).
 */
export function canPayTts({ costCents, chars, maxChars, email, emailVerify }) {
  if (!(costCents > 0)) return false;
  if (maxChars > 0 && chars > maxChars) return false;
  return emailsReady(email, emailVerify);
}
