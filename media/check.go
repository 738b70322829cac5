package media

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Errors CheckAudio fails with besides ErrNoAudio; callers map them to the visitor's codes.
var (
	// ErrUnreadable: ffprobe or ffmpeg cannot read the file as media.
	ErrUnreadable = errors.New("unreadable media")
	// ErrDurationMismatch: the file's header claims a length its content does not hold.
	ErrDurationMismatch = errors.New("duration in the header does not match the content")
)

// MeasureArgs builds the ffmpeg arguments that decode every sample of the first audio
// stream of the local file at path and report, on standard output, the time those samples
// last, and on standard error the silences in them (see speech.go). Container timestamps can lie (an MP4 whose timescales are multiplied by 100 says a
// hundredth of its length, and so does a stream copy that follows them); the decoded
// samples are what an engine transcribes, so they set the price.
func MeasureArgs(path string) []string {
	return measureArgs(localInput(path))
}

// RemoteMeasureArgs is MeasureArgs for a relayed link: url must be a relay URL, never a
// visitor's link.
func RemoteMeasureArgs(url string) []string {
	return measureArgs([]string{"-protocol_whitelist", relayWhitelist, "-format_whitelist", MediaFormats, "-i", url})
}

func measureArgs(input []string) []string {
	// silencedetect reports at the info level; -nostats keeps the progress line out.
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "info"}
	args = append(args, input...)
	return append(args,
		"-map", "0:a:0",
		// Every frame's timestamp becomes the number of samples decoded before it over the
		// decoder's own rate, so the time reached is the samples' length, whatever the
		// container said; silencedetect, after it, reports times on that clock too.
		"-af", "asetpts=N/SR/TB,"+silenceFilter(),
		"-f", "null",
		"-progress", "pipe:1", "-nostats",
		"-",
	)
}

// Measure returns the length of the first audio stream of the local file at path as its
// decoded samples say, not as its header or timestamps claim, and how much of it is
// speech, in one decoding pass.
func (r *Runner) Measure(ctx context.Context, path string) (Measurement, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Measurement{}, fmt.Errorf("measuring %s: %w", path, err)
	}
	m, err := r.measure(ctx, MeasureArgs(abs))
	if err != nil {
		return Measurement{}, fmt.Errorf("measuring %s: %w", filepath.Base(path), err)
	}
	return m, nil
}

// MeasureRemote is Measure for a relayed link (url must be a relay URL). The whole audio
// is decoded, so the whole file is read.
func (r *Runner) MeasureRemote(ctx context.Context, url string) (Measurement, error) {
	return r.measure(ctx, RemoteMeasureArgs(url))
}

func (r *Runner) measure(ctx context.Context, args []string) (Measurement, error) {
	var out bytes.Buffer
	var silences silenceLog
	if err := r.ffmpegLog(ctx, args, &out, &silences); err != nil {
		return Measurement{}, err
	}
	return silences.measurement(parseProgressTime(out.Bytes())), nil
}

// parseProgressTime returns the last out_time_us that ffmpeg's -progress output reports;
// 0 when there is none.
func parseProgressTime(out []byte) time.Duration {
	var last time.Duration
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "out_time_us=")
		if !ok {
			continue
		}
		// Beyond about 292 years a time.Duration would wrap: not a length, ignored.
		if us, err := strconv.ParseInt(v, 10, 64); err == nil && us > 0 && us <= math.MaxInt64/int64(time.Microsecond) {
			last = time.Duration(us) * time.Microsecond
		}
	}
	return last
}

// CheckAudio makes sure the local file at path is audio we can transcribe and returns its
// real duration: it must have an audio stream (ErrNoAudio), be readable with a length
// (ErrUnreadable), and hold about as much audio as its header claims (ErrDurationMismatch).
// The visitor's file name and content type play no part.
func (r *Runner) CheckAudio(ctx context.Context, path string) (time.Duration, error) {
	m, err := r.CheckSpeech(ctx, path)
	return m.Length, err
}

// CheckSpeech is CheckAudio that also says how much of the file is speech (measured in
// the same decoding pass). Whether there is enough is the caller's rule
// (Measurement.HasSpeech).
func (r *Runner) CheckSpeech(ctx context.Context, path string) (Measurement, error) {
	info, err := r.Probe(ctx, path)
	if err != nil {
		if errors.Is(err, ErrNoAudio) || ctx.Err() != nil {
			return Measurement{}, err
		}
		return Measurement{}, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	m, err := r.Measure(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return Measurement{}, err
		}
		return Measurement{}, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if _, err := checkDurations(info.Duration, m.Length); err != nil {
		return Measurement{}, err
	}
	return m, nil
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
