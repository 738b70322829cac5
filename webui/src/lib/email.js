// The two e-mail inputs of an order form (spec section 5): both are
// type=email, with no format check beyond the browser's own.

/** True when both addresses are filled in and differ: show the warning. */
export function emailsMismatch(email, emailVerify) {
  return email !== "" && emailVerify !== "" && email !== emailVerify;
}

/** True when the order has a usable address: non-empty and confirmed. */
export function emailsReady(email, emailVerify) {
  return email !== "" && email === emailVerify;
}
