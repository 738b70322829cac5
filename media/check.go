package media

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Errors the checks (CheckUpload, CheckPaid) fail with besides ErrNoAudio; callers map
// them to the visitor's codes.
var (
	// ErrUnreadable: ffprobe or ffmpeg cannot read the file as media.
	ErrUnreadable = errors.New("unreadable media")
	// ErrDurationMismatch: the file's header claims a length its content does not hold.
	ErrDurationMismatch = errors.New("duration in the header does not match the content")
)

// RemoteMeasureArgs is PCMArgs for a relayed link (url must be a relay URL, never a
// visitor's link): the samples the engine will get, which the measure counts. The decode
// does not estimate the length from the timestamps at the file's end (the probe read it):
// in an MPEG-TS whose clock restarts, that estimate reads the file again and again from its
// end and ran through the relay's byte allowance before a sample was decoded.
func RemoteMeasureArgs(url string) []string {
	return remotePCMArgs(url, 0)
}

// remotePCMArgs is PCMArgs for a relay URL, at most limit of its samples (0: all).
func remotePCMArgs(url string, limit time.Duration) []string {
	args := append([]string{}, globalArgs...)
	args = append(args, "-protocol_whitelist", relayWhitelist, "-format_whitelist", MediaFormats,
		"-skip_estimate_duration_from_pts", "1", "-i", url)
	return append(args, pcmOutput(limit)...)
}

// Measure returns the length of the first audio stream of the local file at path and how
// much of it is speech, in one decoding pass: the length of the very samples the engines
// get (PCMArgs), not what the header or the timestamps claim. Container timestamps can lie
// (an MP4 whose timescales are multiplied by 100 says a hundredth of its length), and a
// stream whose sample rate or channels change mid-stream makes ffmpeg rebuild its filters,
// which restarts any count kept on the file's own clock; the samples an engine transcribes
// are what set the price. With a limit (0: none) the decode stops just past it, counted in
// samples, never cut by the file's own clock: the Measurement then lasts more than limit,
// and the error, if any, is only that the scan stopped reading. It runs in the shared pool.
func (r *Runner) Measure(ctx context.Context, path string, limit time.Duration) (Measurement, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Measurement{}, fmt.Errorf("measuring %s: %w", path, err)
	}
	scan := &silenceScan{}
	if limit > 0 {
		scan.limit = samplesOf(limit) + 1
	}
	if err := r.FFmpeg(ctx, PCMArgs(abs, 0), nil, scan); err != nil {
		return scan.measurement(), fmt.Errorf("measuring %s: %w", filepath.Base(path), err)
	}
	return scan.measurement(), nil
}

// probeError is what a failed probe means for a check: no audio, the check cancelled, or
// a file we cannot read (ErrUnreadable).
func probeError(ctx context.Context, err error) error {
	if errors.Is(err, ErrNoAudio) || ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnreadable, err)
}

// measureError is what a failed decode means for a check: cancelled, or unreadable.
func measureError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnreadable, err)
}

// checkDurations decides the duration to trust from the header's claim and the decoded
// samples' measure: the measure, unless the two disagree grossly. A claim may overstate
// the samples by 2 s or 5 % (encoders' headers and padding differ a little, not by hours)
// and understate them up to half (a VBR MP3 without an index is only estimated); beyond
// that the file is lying about itself and is refused.
func checkDurations(claimed, measured time.Duration) (time.Duration, error) {
	if measured <= 0 {
		return 0, fmt.Errorf("%w: no audio samples", ErrUnreadable)
	}
	if claimed <= 0 {
		return measured, nil
	}
	over := claimed - measured
	under := measured - 2*claimed
	if (over > 2*time.Second && over > measured/20) || under > 2*time.Second {
		return 0, fmt.Errorf("%w: header says %s, content holds %s", ErrDurationMismatch,
			claimed.Round(time.Second), measured.Round(time.Millisecond))
	}
	return measured, nil
}
