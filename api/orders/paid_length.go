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
