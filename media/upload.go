package media

// The measure of a visitor's upload, bounded: a file may cost no more to measure than a
// recording of its size and of the longest length taken would.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Errors CheckUpload fails with besides ErrNoAudio, ErrUnreadable and ErrDurationMismatch.
var (
	// ErrTooLong: the audio lasts longer than the longest upload taken.
	ErrTooLong = errors.New("audio longer than the longest taken")
	// ErrTooDense: the file decodes into far more audio than a recording of its size
	// holds (a decode bomb), or takes longer to measure than one of its size may.
	ErrTooDense = errors.New("audio far longer or slower to read than its size allows")
)

// MinBytesPerSecond is the fewest bytes a second of uploaded audio may take. Speech codecs
// go no lower than about 600 bytes a second (AMR-NB at 4.75 kb/s, Opus at 6 kb/s), and
// even with long stretches of silence coded as nothing (Opus' DTX, FLAC's constant
// blocks) a recording with speech in it stays far above 16. The decode bomb of issue 22
// (65,535-sample FLAC frames of 13 bytes) takes under 2.
const MinBytesPerSecond = 16

// DensityLimit is the longest audio a file of size bytes may hold (MinBytesPerSecond).
func DensityLimit(size int64) time.Duration {
	return time.Duration(size) * time.Second / MinBytesPerSecond
}

// MeasureDeadline is how long measuring a file of size bytes may take, once it runs: 10 s
// and one more second for every 256 KiB. ffmpeg decodes a 25 MB MP3 (26 minutes) in a few
// seconds of one core; the rest is room for a busy machine.
func MeasureDeadline(size int64) time.Duration {
	return 10*time.Second + time.Duration(size/(256<<10))*time.Second
}

// uploadLimit is the most audio measured of a file of size bytes when the longest taken
// is longest (0: no such limit), and the error a file that reaches it is refused with.
func uploadLimit(size int64, longest time.Duration) (time.Duration, error) {
	limit, past := DensityLimit(size), ErrTooDense
	if longest > 0 && longest < limit {
		limit, past = longest, ErrTooLong
	}
	return limit, past
}

// CheckUpload makes sure a visitor's upload is audio we can transcribe and measures it
// (its length and speech, the engines' samples counted), bounded in what it may cost: the audio
// may last at most longest (0: no limit) and DensityLimit of the file's size; decoding
// stops just past the smaller (ErrTooLong, ErrTooDense), and a header that claims more is
// refused before decoding. The measure runs in the visitors' own pool (Config.MaxVisitors)
// and, once it runs, for at most MeasureDeadline of the file's size in CPU time (ErrTooDense). ctx
// ends it too: the caller cancels it when the visitor leaves.
func (r *Runner) CheckUpload(ctx context.Context, path string, longest time.Duration) (Measurement, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Measurement{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Measurement{}, err
	}
	limit, past := uploadLimit(st.Size(), longest)
	release, err := slot(ctx, r.visitors)
	if err != nil {
		return Measurement{}, err
	}
	defer release()
	deadline := MeasureDeadline(st.Size())
	// In CPU time: the measure runs at the lowest priority (visitors.go).
	mctx := withCPUBudget(ctx, func() time.Duration { return deadline })
	m, err := r.checkBounded(mctx, abs, longest, limit, past)
	if err != nil && ctx.Err() == nil && errors.Is(err, errMeasureDeadline) {
		return Measurement{}, fmt.Errorf("%w: measuring took more than %s", ErrTooDense, deadline)
	}
	return m, err
}

// checkBounded is CheckUpload's work once it has its slot: probe, then decode the whole
// file, counting its samples and stopping as soon as they pass limit (refused with past).
// The decode itself is never cut short by the file's own clock (ffmpeg's -t goes by
// timestamps, which a file can squeeze): what is priced is every sample the engine would
// decode from the whole file. A header that claims more than longest is refused at once.
func (r *Runner) checkBounded(ctx context.Context, abs string, longest, limit time.Duration, past error) (Measurement, error) {
	info, err := r.Probe(ctx, abs)
	if err != nil {
		return Measurement{}, probeError(ctx, err)
	}
	if longest > 0 && info.Duration > longest+max(2*time.Second, longest/20) {
		// A header may overstate the samples by this much (checkDurations): beyond it the
		// file is too long or lying, refused either way, and without decoding anything. A
		// header that claims more than the file's size allows is left to the decode: it
		// stops at that limit, or finds a liar (ErrDurationMismatch).
		return Measurement{}, fmt.Errorf("%w: the header says %s", ErrTooLong, info.Duration.Round(time.Second))
	}
	limit, past = uploadHeaderLimit(info.Duration, limit, past)
	scan := &silenceScan{limit: samplesOf(limit) + 1}
	err = runIdle(ctx, r.ffmpeg, PCMArgs(abs, 0), nil, scan)
	m := scan.measurement()
	if m.Length > limit {
		// ffmpeg's error, if any, is only that the scan stopped reading.
		return Measurement{}, fmt.Errorf("%w: more than %s", past, limit.Round(time.Second))
	}
	if err != nil {
		return Measurement{}, measureError(ctx, err)
	}
	if _, err := checkDurations(info.Duration, m.Length); err != nil {
		return Measurement{}, err
	}
	return m, nil
}
