package orders

import "time"

// paidLength is the duration a paid video's engine is given (and capped by, at
// media.EngineLimit of it): the measured length, but never more than the paid one, so the
// engine's cap comes from what was paid, not from a new measure.
func paidLength(measured, paid time.Duration) time.Duration {
	if paid > 0 && measured > paid {
		return paid
	}
	return measured
}

// lengthChanged reports whether a fetched duration differs from the paid one by more than
// encoders' rounding: 2 s, or 2 % of long videos.
func lengthChanged(now, paid int64) bool {
	diff := now - paid
	if diff < 0 {
		diff = -diff
	}
	return diff > max(2, paid/50)
}
