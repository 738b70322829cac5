package media

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"parla/providers/testkit"
)

func TestPCMArgs(t *testing.T) {
	want := []string{
		"-nostdin", "-hide_banner", "-loglevel", "error", "-y",
		"-protocol_whitelist", "file", "-format_whitelist", MediaFormats,
		"-i", "file:/tmp/up/-rf:x.mp4",
		"-map", "0:a:0", "-ac", "1", "-ar", "16000", "-f", "f32le", "pipe:1",
	}
	if got := PCMArgs("/tmp/up/-rf:x.mp4", 0); !slices.Equal(got, want) {
		t.Errorf("PCMArgs =\n%q\nwant\n%q", got, want)
	}
	limited := slices.Insert(slices.Clone(want), slices.Index(want, "-ac"), "-t", "62.000")
	if got := PCMArgs("/tmp/up/-rf:x.mp4", 62*time.Second); !slices.Equal(got, limited) {
		t.Errorf("PCMArgs with a limit =\n%q\nwant\n%q", got, limited)
	}
}

func TestPCMCapacity(t *testing.T) {
	tests := []struct {
		expect time.Duration
		want   int
	}{
		{10 * time.Minute, 9_600_000 + 96_000 + 16_000},
		{time.Second, 16_000 + 160 + 16_000},
		{0, 960_000 + 9_600 + 16_000},
	}
	for _, tt := range tests {
		if got := pcmCapacity(tt.expect); got != tt.want {
			t.Errorf("pcmCapacity(%v) = %d, want %d", tt.expect, got, tt.want)
		}
	}
}

func TestPCMSinkJoinsSplitSamples(t *testing.T) {
	want := []float32{0, 1, -1, 0.5, -0.25, 1e-7}
	var raw []byte
	for _, f := range want {
		b := math.Float32bits(f)
		raw = append(raw, byte(b), byte(b>>8), byte(b>>16), byte(b>>24))
	}
	// Every way of cutting the stream into writes gives the same samples.
	for _, size := range []int{1, 2, 3, 4, 5, 7, len(raw)} {
		s := &pcmSink{}
		for p := raw; len(p) > 0; {
			n := min(size, len(p))
			if w, err := s.Write(p[:n]); w != n || err != nil {
				t.Fatalf("Write = %d, %v", w, err)
			}
			p = p[n:]
		}
		if !slices.Equal(s.samples, want) {
			t.Errorf("writes of %d bytes: %v, want %v", size, s.samples, want)
		}
	}
}

// pcmSpeech makes a few seconds of espeak-ng speech as WAV and returns its path and exact
// duration (from its sample count).
func pcmSpeech(t *testing.T) (string, time.Duration) {
	t.Helper()
	espeak := testkit.Binary(t, "espeak-ng")
	path := filepath.Join(t.TempDir(), "speech.wav")
	text := "Parla turns speech into text. This sentence is long enough to measure the decoder."
	if out, err := exec.Command(espeak, "-w", path, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	format, err := ReadWAVHeader(f)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	// The rest of the file after the header is samples (espeak writes no trailing chunks).
	pos, _ := f.Seek(0, 1)
	frames := (st.Size() - pos) / int64(format.Channels*format.BitsPerSample/8)
	return path, time.Duration(frames) * time.Second / time.Duration(format.SampleRate)
}

// ffmpegFile runs ffmpeg with args (inputs and output options) and returns the file it
// wrote, named with ext.
func ffmpegFile(t *testing.T, ext string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "in."+ext)
	args = append([]string{"-nostdin", "-hide_banner", "-loglevel", "error"}, args...)
	if b, err := exec.Command("ffmpeg", append(args, out)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg to %s: %v: %s", ext, err, b)
	}
	return out
}

func TestDecodePCM(t *testing.T) {
	r := newRunner(t)
	wav, dur := pcmSpeech(t)
	want := float64(dur) / float64(time.Second) * PCMRate
	tests := []struct {
		name string
		path string
	}{
		{"espeak wav", wav},
		{"mp3", ffmpegFile(t, "mp3", "-i", wav)},
		{"opus", ffmpegFile(t, "opus", "-i", wav)},
		{"stereo 44.1 kHz wav", ffmpegFile(t, "wav", "-i", wav, "-ac", "2", "-ar", "44100")},
		{"aac in a video", ffmpegFile(t, "mp4", "-f", "lavfi", "-i", "color=s=64x64:d="+dur.String(), "-i", wav,
			"-c:v", "libx264", "-c:a", "aac", "-shortest")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, expect := range []time.Duration{dur, 0, dur / 4} {
				samples, err := r.DecodePCM(context.Background(), tt.path, expect, 0)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("expect %v: %d samples, exact %.0f", expect, len(samples), want)
				if got := float64(len(samples)); math.Abs(got-want) > 0.01*want {
					t.Errorf("expect %v: %d samples, want %.0f ±1%%", expect, len(samples), want)
				}
				peak := float32(0)
				for _, s := range samples {
					if !(s >= -1 && s <= 1) {
						t.Fatalf("sample %v outside [-1, 1]", s)
					}
					peak = max(peak, s, -s)
				}
				if peak < 0.05 {
					t.Errorf("peak %v: decoded silence", peak)
				}
			}
		})
	}
}

func TestDecodePCMFailures(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not audio at all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	video := ffmpegFile(t, "mp4", "-f", "lavfi", "-i", "color=s=64x64:d=1")
	t.Run("not media", func(t *testing.T) {
		_, err := r.DecodePCM(context.Background(), text, time.Second, 0)
		if err == nil || errors.Is(err, ErrNoAudio) {
			t.Fatalf("err = %v, want a decoding error", err)
		}
	})
	t.Run("video without audio", func(t *testing.T) {
		_, err := r.DecodePCM(context.Background(), video, time.Second, 0)
		if !errors.Is(err, ErrNoAudio) {
			t.Fatalf("err = %v, want ErrNoAudio", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if _, err := r.DecodePCM(context.Background(), filepath.Join(dir, "gone.mp3"), 0, 0); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := r.DecodePCM(ctx, text, 0, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}
