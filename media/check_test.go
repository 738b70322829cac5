package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"parla/providers/testkit"
)

// A relayed link is measured on the samples the engine gets, as a local file is, whole
// (no -t), without the length estimate that reads the file again from its end.
func TestRemoteMeasureArgs(t *testing.T) {
	got := RemoteMeasureArgs("http://127.0.0.1:9/r/x")
	want := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-protocol_whitelist", relayWhitelist,
		"-format_whitelist", MediaFormats, "-skip_estimate_duration_from_pts", "1", "-i", "http://127.0.0.1:9/r/x",
		"-map", "0:a:0", "-ac", "1", "-ar", "16000", "-f", "f32le", "pipe:1"}
	if !slices.Equal(got, want) {
		t.Fatalf("args\n got %q\nwant %q", got, want)
	}
}

func TestCheckDurations(t *testing.T) {
	for _, c := range []struct {
		claimed, measured, want time.Duration
		err                     error
	}{
		{5 * time.Second, 4990 * time.Millisecond, 4990 * time.Millisecond, nil},
		{0, 3 * time.Second, 3 * time.Second, nil},
		{4 * time.Second, 5 * time.Second, 5 * time.Second, nil},           // header short: trust samples
		{60 * time.Second, 100 * time.Second, 100 * time.Second, nil},      // a VBR estimate, under half off
		{10 * time.Second, 958 * time.Second, 0, ErrDurationMismatch},      // timescales ×100: priced as 10 s
		{50 * time.Millisecond, 5 * time.Second, 0, ErrDurationMismatch},   // the same on a short clip
		{62 * time.Minute, 60 * time.Minute, 60 * time.Minute, nil},        // 2 min over, but under 5 %
		{3 * time.Hour, 5 * time.Second, 0, ErrDurationMismatch},           // hours claimed, seconds held
		{5 * time.Second, 2500 * time.Millisecond, 0, ErrDurationMismatch}, // truncated
		{5 * time.Second, 0, 0, ErrUnreadable},
	} {
		got, err := checkDurations(c.claimed, c.measured)
		if !errors.Is(err, c.err) || got != c.want {
			t.Errorf("checkDurations(%v, %v) = %v, %v; want %v, %v", c.claimed, c.measured, got, err, c.want, c.err)
		}
	}
}

// TestCheckUploadTakesAudio: an upload (no longest) is taken at its real length whatever
// its format, and refused for what it is when it is no audio we can transcribe.
func TestCheckUploadTakesAudio(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	ctx := context.Background()
	for _, ext := range []string{"mp3", "wav", "m4a", "ogg", "webm", "flac", "mp4"} {
		path := testkit.Speech(t, dir, "speech."+ext, testkit.SampleSentence)
		m, err := r.CheckUpload(ctx, path, 0)
		got := m.Length
		if err != nil {
			t.Errorf("%s: %v", ext, err)
			continue
		}
		ref, err := r.Measure(ctx, filepath.Join(dir, "speech.wav"), 0)
		if ext != "wav" && err == nil && !near(got, ref.Length, 0.05) {
			t.Errorf("%s: %v, the wav holds %v", ext, got, ref)
		}
		if got < 3*time.Second || got > 15*time.Second {
			t.Errorf("%s: %v is not the sentence's length", ext, got)
		}
	}

	mp3, _ := os.ReadFile(filepath.Join(dir, "speech.mp3"))
	m4a, _ := os.ReadFile(filepath.Join(dir, "speech.m4a"))
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	liar := write("liar.mp3", mp3)
	testkit.ClaimFrames(t, liar, 400000) // about 3 hours at 24 kHz
	silentVideo := filepath.Join(dir, "silent.mp4")
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "color=c=red:s=64x64:d=2", "-c:v", "libx264", "-preset", "ultrafast", silentVideo)
	for _, c := range []struct {
		name string
		path string
		err  error
	}{
		{"text named mp3", write("notes.mp3", []byte("these are my notes, not audio\n")), ErrUnreadable},
		{"empty", write("empty.mp3", nil), ErrUnreadable},
		{"first 300 bytes", write("tiny.mp3", mp3[:300]), ErrUnreadable},
		{"truncated in the middle", write("half.mp3", mp3[:len(mp3)/2]), ErrDurationMismatch},
		{"header claims hours", liar, ErrDurationMismatch},
		{"timescales multiplied by 100", write("scaled.m4a", scaleTimescales(t, m4a, 100)), ErrDurationMismatch},
		{"video without audio", silentVideo, ErrNoAudio},
	} {
		m, err := r.CheckUpload(ctx, c.path, 0)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: got %v, %v; want %v", c.name, m.Length, err, c.err)
		}
	}
}

// scaleTimescales multiplies the timescale of an MP4's movie header (mvhd) and of every
// media header (mdhd) by factor, leaving the sample tables alone: every timestamp then
// says 1/factor of the real time, while the samples are all still there.
func scaleTimescales(t *testing.T, mp4 []byte, factor uint32) []byte {
	t.Helper()
	out := slices.Clone(mp4)
	n := 0
	for _, box := range []string{"mvhd", "mdhd"} {
		for i := 0; ; {
			j := bytes.Index(out[i:], []byte(box))
			if j < 0 {
				break
			}
			at := i + j + 4 // version byte
			// version 0: 4-byte creation and modification times; version 1: 8-byte.
			ts := at + 4 + 8
			if out[at] == 1 {
				ts = at + 4 + 16
			}
			v := binary.BigEndian.Uint32(out[ts:])
			binary.BigEndian.PutUint32(out[ts:], v*factor)
			n++
			i = ts
		}
	}
	if n < 2 {
		t.Fatalf("found %d mvhd/mdhd boxes", n)
	}
	return out
}
