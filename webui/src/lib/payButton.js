import { emailsReady } from "./email.js";

/**
 * Whether the pay section of the text-to-speech page offers the pay button:
 * a cost above zero, a text with something to read (`blank`: only white space, which
 * the server refuses as empty_text), within the configured maximum, and a confirmed
 * e-mail address (spec: "States and transitions").
 */
export function canPayTts({ costCents, chars, maxChars, blank = false, email, emailVerify }) {
  if (!(costCents > 0) || blank) return false;
  if (maxChars > 0 && chars > maxChars) return false;
  return emailsReady(email, emailVerify);
}

/**
 * Whether the pay section of a transcription page offers the pay button
 * (spec: "States and transitions", common rules): a cost above zero, which exists only once
 * the upload or the analysis has returned it, and a confirmed e-mail address.
 */
export function canPayTranscription({ costCents, email, emailVerify }) {
  return costCents > 0 && emailsReady(email, emailVerify);
}
