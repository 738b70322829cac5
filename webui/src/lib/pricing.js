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

/**
 * Cost in cents of transcribing `seconds` of audio or video:
 * max(minAmount, ceil(unitAmount × seconds / perSeconds)), as the server
 * charges it (GET /api/config sst.price / vtt.price). No duration costs nothing.
 */
export function durationCostCents(seconds, price) {
  if (!price || !(price.perSeconds > 0) || !(seconds > 0)) return 0;
  // Integer arithmetic: unitAmount × seconds is exact, the division rounds up once.
  const cents = Math.ceil((price.unitAmount * Math.ceil(seconds)) / price.perSeconds);
  return Math.max(price.minAmount || 0, cents);
}

/** The price of one minute in (possibly fractional) cents, for the "about … per minute" line. */
export function perMinuteCents(price) {
  if (!price || !(price.perSeconds > 0)) return 0;
  return (price.unitAmount * 60) / price.perSeconds;
}
