package links

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"parla/media"
	"time"
)

// tooLong reports a header length past the operator's MaxDuration: Analyze refuses it
// without decoding anything.
func (r *Resolver) tooLong(d time.Duration) bool {
	return r.cfg.MaxDuration > 0 && d > r.cfg.MaxDuration
}

// measureBounded decodes the audio of a direct link of the given size through a fresh
// relay, bounded as an upload's measure is (media.MeasureRemoteBounded: the header's
// length and its tolerance, MaxDuration, what the size can hold, a deadline growing with
// the bytes read), and records its speech in info, and its length when the header counts
// less: the price is never set below the samples decoded. The caller holds a visitors' slot.
// The relay lets ffmpeg read the file four times over and a megabyte: the decode reads it
// once, and the demuxers seek (an MP4's index at its end, a WAV's chunks past its data, an
// Ogg's last page).
//
// A link whose audio lies about its length (media.ErrDurationMismatch), goes on past
// MaxDuration (ErrTooLong) or is a decode bomb (media.ErrTooDense) is refused: its price
// would be set on a header the paid job would then refund. Any other failure (the source
// cut off, the analysis out of time, a host without byte ranges serving an MP4 indexed at
// its end) leaves the speech unmeasured: the probe already found
// the link good, and the audio is measured again, capped at the paid length, after payment.
func (r *Resolver) measureBounded(ctx context.Context, u *url.URL, size int64, info *LinkInfo) error {
	rl, err := r.cfg.Guard.relayAnswering(ctx, u, 4*size+1<<20, r.cfg.FirstByteTimeout)
	if err != nil {
		return nil
	}
	defer rl.Close()
	m, err := r.cfg.Runner.MeasureRemoteBounded(ctx, rl.URL, media.RemoteBounds{
		Claimed: info.Duration, Longest: r.cfg.MaxDuration, Size: size, BytesRead: rl.Stats.BytesRead,
	})
	switch {
	case errors.Is(err, media.ErrTooLong):
		return fmt.Errorf("%w: %s: %v", ErrTooLong, u.Hostname(), err)
	case errors.Is(err, media.ErrDurationMismatch), errors.Is(err, media.ErrTooDense):
		if rl.Stats.Err() == nil { // a cut transfer only looks short
			return fmt.Errorf("analysing %s: %w", u.Hostname(), err)
		}
		return nil
	case err != nil || rl.Stats.Err() != nil || m.Length <= 0:
		return nil
	}
	// The price is set on info.Duration: never less than the samples the engine decodes
	// (the header may count up to LengthTolerance fewer).
	info.Duration = max(info.Duration, m.Length)
	info.Speech, info.SpeechMeasured = min(m.Speech, info.Duration), true
	return nil
}
