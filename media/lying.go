package media

// Files whose header lies about their length: refused at analysis, before any payment, by
// a decode that stops as soon as it passes the header's length by the tolerance the price
// allows; and after payment, no decode goes past the paid length and its margin.

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// LengthTolerance is how far a decoded length may stray from the length a price was set
// on (a link's header, or the paid length) before the two are different media: 2 s, or
// 2 % of long ones. The order book refunds a paid video whose length changed by more; a
// link whose decode strays that far from its header is refused before payment instead.
func LengthTolerance(d time.Duration) time.Duration {
	return max(2*time.Second, d/50)
}

// headerLimit is the most audio a local file whose header claims claimed may decode to
// before checkDurations refuses it as lying (twice the claim and 2 s); 0 when the header
// says nothing.
func headerLimit(claimed time.Duration) time.Duration {
	if claimed <= 0 {
		return 0
	}
	return 2*claimed + 2*time.Second
}

// uploadHeaderLimit lowers an upload's decode limit to headerLimit of its header's claim,
// so a file that says a minute and holds hours is refused (ErrDurationMismatch) a minute
// and a bit into its decode, not at the size or service limit.
func uploadHeaderLimit(claimed, limit time.Duration, past error) (time.Duration, error) {
	if h := headerLimit(claimed); h > 0 && h < limit {
		return h, ErrDurationMismatch
	}
	return limit, past
}

// CheckPaid checks media fetched after payment, priced at paid, as CheckUpload checks an
// upload (probe, measure, header against samples): the decode stops just past
// EngineLimit(paid), the most any engine is given of it, and a file that goes on past that
// is refused (ErrTooLong) without decoding the rest. The limit comes
// from the paid length, never from a new measure. It runs in the shared pool: paid work.
func (r *Runner) CheckPaid(ctx context.Context, path string, paid time.Duration) (Measurement, error) {
	limit := EngineLimit(paid)
	if limit <= 0 {
		return Measurement{}, fmt.Errorf("checking %s: no paid length", filepath.Base(path))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Measurement{}, err
	}
	info, err := r.Probe(ctx, abs)
	if err != nil {
		return Measurement{}, probeError(ctx, err)
	}
	// Counted in samples, not cut by -t: a squeezed clock must not hide what runs past.
	m, err := r.Measure(ctx, abs, limit)
	if m.Length > limit {
		return Measurement{}, fmt.Errorf("%w: paid for %s, the audio goes on past %s", ErrTooLong,
			paid.Round(time.Second), limit.Round(time.Second))
	}
	if err != nil {
		return Measurement{}, measureError(ctx, err)
	}
	if _, err := checkDurations(info.Duration, m.Length); err != nil {
		return Measurement{}, err
	}
	return m, nil
}
