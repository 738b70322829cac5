// The speed slider: a number in [min, max] with two decimals (spec: "Validation rules").

/** The speed as shown next to the slider: always two decimals ("1.00"). */
export function formatSpeed(speed) {
  return Number(speed).toFixed(2);
}

/** Parses a slider value, rounds it to hundredths and keeps it within range. */
export function parseSpeed(value, { min = 0.25, max = 4 } = {}) {
  const n = Number(value);
  if (!Number.isFinite(n)) return 1;
  const rounded = Math.round(n * 100) / 100;
  return Math.min(max, Math.max(min, rounded));
}
