// Prices are integer cents. The rule and its numbers come from GET /api/config
// (tts.price), so the page shows exactly what the server will charge.

/** Number of characters as the server counts them: Unicode code points. */
export function countChars(text) {
  if (!text) return 0;
  let n = 0;
  // for…of walks code points, so an emoji or a CJK ideograph counts once.
  for (const _ of text) n++;
  return n;
}

/**
 * Cost in cents of a text-to-speech order of `chars` characters:
 * unitAmount × ceil(chars / unitChars). Zero characters cost nothing.
 */
export function ttsCostCents(chars, price) {
  if (!price || !(price.unitChars > 0) || !(chars > 0)) return 0;
  return price.unitAmount * Math.ceil(chars / price.unitChars);
}

/** Cents as a localized currency string, e.g. 99 → "€0.99" (en) or "0,99 €" (es). */
export function formatMoney(cents, currency = "eur", locale = "en") {
  return new Intl.NumberFormat(locale, {
    style: "currency",
    currency: String(currency).toUpperCase(),
  }).format(cents / 100);
}
