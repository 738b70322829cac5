// The two e-mail inputs of an order form (spec: "Validation rules"), checked by the
// server's own rule (api/orders/validate.go ValidateEmail) where they are
// typed, so that a bad address is caught before Pay and never on
// /payment/error: a bare address (no display name, no comments, no quoted
// local part), at most 254 bytes, with a dot after the @; surrounding spaces
// are trimmed.

// RFC 5322 atext, plus any non-ASCII character (RFC 6532), as Go's net/mail reads it.
const ATEXT = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u{80}-\u{10FFFF}]+$/u;
// A domain literal such as [192.0.2.1]: printable ASCII but for brackets and backslash.
const DOMAIN_LITERAL = /^\[[\x21-\x5a\x5e-\x7e]*\]$/;
// Bidirectional controls, refused by the server: they make an address read as another.
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const MAX_BYTES = 254;

const dotAtom = (s) => s.split(".").every((part) => ATEXT.test(part));

/**
 * The error code of an address as the server would answer it: "invalid_email"
 * (translated under errors.invalid_email), or "" when it is a usable address.
 * An empty field is "" too: nothing typed yet is not an error to show.
 */
export function emailError(email) {
  const e = String(email ?? "").trim();
  if (e === "") return "";
  if (new TextEncoder().encode(e).length > MAX_BYTES || /[\r\n\0]/.test(e) || BIDI.test(e)) return "invalid_email";
  const at = e.lastIndexOf("@");
  if (at <= 0) return "invalid_email";
  const local = e.slice(0, at);
  const domain = e.slice(at + 1);
  if (!dotAtom(local)) return "invalid_email";
  if (!(dotAtom(domain) || DOMAIN_LITERAL.test(domain)) || !domain.includes(".")) return "invalid_email";
  return "";
}

/** True when both addresses are filled in and differ: show the warning. */
export function emailsMismatch(email, emailVerify) {
  return email !== "" && emailVerify !== "" && email.trim() !== emailVerify.trim();
}

/** True when the order has a usable address: valid by the server's rule, and confirmed. */
export function emailsReady(email, emailVerify) {
  return email.trim() !== "" && emailError(email) === "" && email.trim() === emailVerify.trim();
}
