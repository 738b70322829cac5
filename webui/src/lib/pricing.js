// Prices are integer cents. Each service's rule comes whole from GET /api/config
// (tts.price, sst.price, vtt.price: {unitAmount, per, rounding, minAmount}), and
// priceCents applies it as the server does (Rule.Amount in api/orders/pricing.go),
// so the page shows exactly what the checkout charges. No price lives here.

/** A letter or a digit in any script: what makes a text speakable (Go's unicode.IsLetter, IsNumber). */
const SPEAKABLE = /[\p{L}\p{N}]/u;

/**
 * Whether the server refuses a text to speak as empty_text: nothing speakable, no letter and
 * no digit (api/orders: Unspeakable): white space, punctuation, symbols or emoji alone.
 */
export function blankText(text) {
  return !SPEAKABLE.test(text || "");
}

/** Number of characters as the server counts them: Unicode code points. */
export function countChars(text) {
  if (!text) return 0;
  let n = 0;
  // for…of walks code points, so an emoji or a CJK ideograph counts once.
  for (const _ of text) n++;
  return n;
}

/** A rule's numbers as BigInts, or null when it cannot price anything (missing, not whole cents, per not positive). */
function bigRule(rule) {
  const whole = (n) => Number.isSafeInteger(n);
  if (!rule || !whole(rule.unitAmount) || !whole(rule.per) || !(rule.per > 0)) return null;
  const min = rule.minAmount ?? 0;
  if (!whole(min)) return null;
  return { unit: BigInt(rule.unitAmount), per: BigInt(rule.per), min: BigInt(min) };
}

/**
 * The price in cents of `quantity` under `rule` (GET /api/config's `price` of a
 * service), the server's arithmetic to the cent:
 *   quantity <= 0 → 0;
 *   "started":      unitAmount × ceil(quantity / per);
 *   "proportional": ceil(unitAmount × quantity / per) (any other rounding, as on the server);
 *   then max(minAmount, amount).
 * `quantity` is characters (code points) for text-to-speech and whole seconds for
 * audio and video; a fractional number of seconds is rounded up first, as the
 * server measures them. Integer arithmetic (BigInt), so no float ever rounds a cent.
 * No usable rule prices nothing at 0.
 */
export function priceCents(quantity, rule) {
  const r = bigRule(rule);
  if (!r || !(quantity > 0)) return 0;
  const q = BigInt(Math.ceil(quantity));
  const ceilDiv = (a, b) => (a + b - 1n) / b;
  const amount = rule.rounding === "started" ? r.unit * ceilDiv(q, r.per) : ceilDiv(r.unit * q, r.per);
  return Number(amount > r.min ? amount : r.min);
}

/** Cents as a localized currency string, e.g. 99 → "€0.99" (en) or "0,99 €" (es). */
export function formatMoney(cents, currency = "eur", locale = "en", digits = {}) {
  return new Intl.NumberFormat(locale, {
    style: "currency",
    currency: String(currency).toUpperCase(),
    ...digits,
  }).format(cents / 100);
}

/**
 * Fractional cents to the thousandth of a cent, as the API keeps balances and charges
 * (Parla-Charged-Cents): 0.198 → "€0.00198", 11.88 → "€0.1188", 500 → "€5.00".
 */
export function formatMilliMoney(cents, currency = "eur", locale = "en") {
  return formatMoney(Math.round(cents * 1000) / 1000, currency, locale, { maximumFractionDigits: 5 });
}

/**
 * What one minute costs under a per-second rule, for the "… per minute" line,
 * before any minimum. Proportional rules: the rate, unitAmount × 60 / per
 * (possibly fractional cents, shown as "about"). Per started unit: the price of
 * 60 seconds, unitAmount × ceil(60 / per), which is what a one-minute file is charged.
 */
export function perMinuteCents(rule) {
  if (!bigRule(rule)) return 0;
  if (rule.rounding === "started") return priceCents(60, { ...rule, minAmount: 0 });
  return (rule.unitAmount * 60) / rule.per;
}
