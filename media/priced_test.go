package media

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"parla/providers/testkit"
)

// measureRefusals are the errors a measure may refuse a file with: each has a code the
// pages translate (api/errors.go).
var measureRefusals = []error{ErrUnreadable, ErrDurationMismatch, ErrNoAudio, ErrTooLong, ErrTooDense}

func knownRefusal(err error) bool {
	for _, known := range measureRefusals {
		if errors.Is(err, known) {
			return true
		}
	}
	return false
}

// TestEverySecondPriced (issue 36, item 3): over the generated files that bend their length
// (testkit.LyingMedia: segments switching codec parameters, squeezed and stretched clocks,
// chained Ogg, headers that under-count, containers joined), held against a plain ffmpeg
// decode of the whole file:
//   - the upload's measure prices at least what is heard, or refuses with a known code;
//   - the paid check, given the price, passes the same file; given a third of what is heard
//     (a file that changed after its price), it refuses it (ErrTooLong) unless the engine's
//     margin covers it, and whatever it passes the engine hears no more than that margin;
//   - the paid check on a file the upload refused, priced at what its header says (a link
//     priced on its header), refuses it or holds it within the paid length's margin.
func TestEverySecondPriced(t *testing.T) {
	r := newRunner(t)
	cases := testkit.LyingMedia(t, t.TempDir())
	if len(cases) < 40 {
		t.Fatalf("%d generated cases; the issue asks for at least 40", len(cases))
	}
	ctx := context.Background()
	var priced, refused int
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			heard, ok := testkit.HeardPCM(t, c.Path)
			m, err := r.CheckUpload(ctx, c.Path, 3*time.Hour)
			switch {
			case err != nil && !knownRefusal(err):
				t.Fatalf("refused with an unknown error: %v", err)
			case err != nil:
				refused++
				t.Logf("refused: %v (heard %v)", err, heard)
				paidAtHeader(t, r, c.Path, heard)
				return
			case !ok:
				t.Fatalf("priced %v, but a plain decode reads nothing", m.Length)
			case m.Length < heard-time.Millisecond:
				t.Fatalf("priced %v, a plain decode of the whole file hears %v", m.Length, heard)
			}
			priced++
			t.Logf("priced %v, heard %v", m.Length, heard)
			if _, err := r.CheckPaid(ctx, c.Path, m.Length); err != nil {
				t.Errorf("paid %v for what was priced %v, the paid check refuses it: %v", m.Length, m.Length, err)
			}
			paidHolds(t, r, c.Path, heard/3, heard)
		})
	}
	t.Logf("%d cases: %d priced, %d refused", len(cases), priced, refused)
}

// paidAtHeader: the paid check of a file priced at its header's length.
func paidAtHeader(t *testing.T, r *Runner, path string, heard time.Duration) {
	t.Helper()
	info, err := r.Probe(context.Background(), path)
	if err != nil || info.Duration <= 0 {
		return // nothing a header could price
	}
	paidHolds(t, r, path, info.Duration, heard)
}

// paidHolds: CheckPaid of path paid as paid refuses it with a known code, or the whole
// file (heard) fits in what the engine may be given for paid.
func paidHolds(t *testing.T, r *Runner, path string, paid, heard time.Duration) {
	t.Helper()
	m, err := r.CheckPaid(context.Background(), path, paid)
	switch {
	case err != nil && !knownRefusal(err):
		t.Errorf("paid %v: refused with an unknown error: %v", paid, err)
	case err == nil && heard > EngineLimit(paid)+time.Millisecond:
		t.Errorf("paid %v (the engine takes up to %v), the paid check passes it (measured %v) though the file holds %v",
			paid, EngineLimit(paid), m.Length, heard)
	}
}

// TestSqueezedClockSegmentsRefused: the file, twenty minutes of AAC in ADTS
// segments of 30 s switching between 16 kHz mono and 22.05 kHz stereo, remuxed to an MPEG-TS whose
// clock runs 48 times fast (its header says 30 s). It was priced as 55 s: the decode was
// cut by ffmpeg's -t, which counts the squeezed timestamps, at twice the header's claim.
// Now the decode counts samples and is refused before payment (length_mismatch), or
// priced at no less than 95 % of the 1,202 s a plain decode hears.
func TestSqueezedClockSegmentsRefused(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	ffmpeg := testkit.Binary(t, "ffmpeg")
	// Two 30 s segments, encoded once, in turn twenty times: 1,202 s, the file.
	var pair []byte
	for _, p := range [][2]string{{"16000", "1"}, {"22050", "2"}} {
		seg := filepath.Join(dir, "seg.aac")
		testkit.Run(t, ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
			"-i", "sine=frequency=440:sample_rate="+p[0]+":duration=30", "-ac", p[1],
			"-c:a", "aac", "-b:a", "32k", "-f", "adts", "file:"+seg)
		data, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		pair = append(pair, data...)
	}
	adts := bytes.Repeat(pair, 20)
	all := filepath.Join(dir, "all.aac")
	if err := os.WriteFile(all, adts, 0o644); err != nil {
		t.Fatal(err)
	}
	squeezed := filepath.Join(dir, "squeezed.ts")
	testkit.Run(t, ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-itsscale", "0.0208333", "-i", "file:"+all,
		"-c", "copy", "-f", "mpegts", "file:"+squeezed)
	heard, _ := testkit.HeardPCM(t, squeezed)
	if heard < 1190*time.Second {
		t.Fatalf("a plain decode hears %v of the twenty minutes", heard)
	}
	ctx := context.Background()
	m, err := r.CheckUpload(ctx, squeezed, 3*time.Hour)
	switch {
	case errors.Is(err, ErrDurationMismatch):
		t.Logf("refused: %v", err)
	case err != nil:
		t.Fatalf("refused with %v; want ErrDurationMismatch (length_mismatch)", err)
	case m.Length < heard*95/100:
		t.Fatalf("priced %v of the %v a plain decode hears", m.Length, heard)
	}
	// And plain ADTS, as before.
	if _, err := r.CheckUpload(ctx, all, 3*time.Hour); err != nil && !errors.Is(err, ErrDurationMismatch) {
		t.Errorf("the segments as plain ADTS: %v", err)
	}
}
