// Durations and sizes as the transcription pages show them. Units come from
// Intl (unit formatting), so no locale file has to spell "min" or "MB".

/** Whole seconds, rounded up (spec: "Entities and their fields"); null when d is not a usable duration. */
export function wholeSeconds(d) {
  const n = Number(d);
  return Number.isFinite(n) && n > 0 ? Math.ceil(n) : null;
}

/** Seconds split into whole minutes and the remaining seconds: 125 → {minutes: 2, seconds: 5}. */
export function splitDuration(total) {
  const s = Math.max(0, Math.ceil(Number(total) || 0));
  return { minutes: Math.floor(s / 60), seconds: s % 60 };
}

/** "m:ss" (minutes are not folded into hours): 65 → "1:05", 10800 → "180:00". */
export function formatClock(total) {
  const { minutes, seconds } = splitDuration(total);
  return `${minutes}:${String(seconds).padStart(2, "0")}`;
}

function unit(n, u, locale) {
  return new Intl.NumberFormat(locale, { style: "unit", unit: u, unitDisplay: "short" }).format(n);
}

/**
 * Minutes and seconds in words of `locale`, e.g. "2 min 5 sec"; zero minutes
 * are left out ("45 sec"), zero seconds too when there are minutes ("3 min").
 */
export function formatDuration(total, locale = "en") {
  const { minutes, seconds } = splitDuration(total);
  const parts = [];
  if (minutes > 0) parts.push(unit(minutes, "minute", locale));
  if (seconds > 0 || minutes === 0) parts.push(unit(seconds, "second", locale));
  return parts.join(" ");
}

/** A limit in seconds in its largest whole unit: 10800 → "3 hr", 600 → "10 min". */
export function formatLimit(total, locale = "en") {
  const s = Math.max(0, Math.floor(Number(total) || 0));
  if (s > 0 && s % 3600 === 0) return unit(s / 3600, "hour", locale);
  if (s > 0 && s % 60 === 0) return unit(s / 60, "minute", locale);
  return unit(s, "second", locale);
}

/** Bytes in megabytes (2^20), at most one decimal: 26214400 → "25 MB". */
export function formatSize(bytes, locale = "en") {
  const mb = (Number(bytes) || 0) / (1 << 20);
  return new Intl.NumberFormat(locale, { style: "unit", unit: "megabyte", unitDisplay: "short", maximumFractionDigits: 1 }).format(mb);
}

/**
 * How much speech to announce for `speech` seconds (the server's
 * speechSeconds): under a minute in seconds, else in whole minutes rounded
 * to the nearest ("about 3 min"). The key names the transcribe.* message; its
 * plural form follows `count`. null when there is no measure.
 */
export function speechAmount(speech) {
  const s = Number(speech);
  if (speech == null || !Number.isFinite(s) || s < 0) return null;
  const secs = Math.ceil(s);
  if (secs < 60) return { key: "speechSeconds", count: secs };
  return { key: "speechMinutes", count: Math.round(secs / 60) };
}
