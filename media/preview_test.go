package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"parla/providers/testkit"
)

// previewLength is the preview of the contract: the first 30 s.
const previewLength = 30 * time.Second

func TestPreviewArgs(t *testing.T) {
	head := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}
	tail := []string{"-map", "0:a:0", "-t", "30.000", "-ac", "1", "-ar", "16000", "-f", "f32le", "pipe:1"}
	tests := []struct {
		name   string
		input  string
		remote bool
		want   []string
	}{
		{"a local file and nothing it points to", "/up/abc", false, slices.Concat(head,
			[]string{"-protocol_whitelist", "file", "-format_whitelist", MediaFormats, "-i", "file:/up/abc"}, tail)},
		{"a relay URL, without the length estimate", "http://127.0.0.1:9/t/x/media", true, slices.Concat(head,
			[]string{"-protocol_whitelist", "http,tcp", "-format_whitelist", MediaFormats,
				"-skip_estimate_duration_from_pts", "1", "-i", "http://127.0.0.1:9/t/x/media"}, tail)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := previewArgs(tt.input, tt.remote, previewLength); !slices.Equal(got, tt.want) {
				t.Errorf("args\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestWAVFile(t *testing.T) {
	samples := []float32{0, 1, -1, 0.5, -0.25, 2, -2, float32(math.NaN())}
	b := wavFile(samples)
	f, err := ReadWAVHeader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if f != (WAVFormat{SampleRate: 16000, Channels: 1, BitsPerSample: 16}) {
		t.Errorf("format %+v", f)
	}
	if len(b) != 44+2*len(samples) || string(b[36:40]) != "data" {
		t.Fatalf("%d bytes, data chunk at %q", len(b), b[36:40])
	}
	for _, c := range []struct {
		at   int // offset in the file
		want uint32
		size int
	}{{4, uint32(36 + 2*len(samples)), 4}, {28, 32000, 4}, {40, uint32(2 * len(samples)), 4}} {
		if got := leUint(b[c.at : c.at+c.size]); got != c.want {
			t.Errorf("header at %d: %d, want %d", c.at, got, c.want)
		}
	}
	want := []int16{0, 32767, -32767, 16384, -8192, 32767, -32768, 0}
	if got := wavSamples(t, b); !slices.Equal(got, want) {
		t.Errorf("samples %v, want %v", got, want)
	}
}

func leUint(b []byte) uint32 {
	var v uint32
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint32(b[i])
	}
	return v
}

// wavSamples reads a WAV file's 16-bit samples back.
func wavSamples(t *testing.T, wav []byte) []int16 {
	t.Helper()
	r := bytes.NewReader(wav)
	if _, err := ReadWAVHeader(r); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	out := make([]int16, len(rest)/2)
	for i := range out {
		out[i] = int16(uint16(rest[2*i]) | uint16(rest[2*i+1])<<8)
	}
	return out
}

// longSpeech writes dir/name: espeak-ng's sentence said over and over for length, after
// lead of digital silence, encoded as its extension says (ffmpeg's defaults for it).
func longSpeech(t *testing.T, dir, name string, lead, length time.Duration, enc ...string) string {
	t.Helper()
	once := testkit.Speech(t, dir, "once-"+name+".wav", testkit.SampleSentence)
	out := filepath.Join(dir, name)
	args := []string{"-nostdin", "-loglevel", "error", "-y", "-stream_loop", "-1", "-i", once}
	if lead > 0 {
		// Silence first: all channels delayed by lead, filled with zeros.
		args = append(args, "-af", "adelay="+strconv.FormatInt(lead.Milliseconds(), 10)+":all=1")
	}
	args = append(args, "-t", seconds(lead+length))
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), append(append(args, enc...), "file:"+out)...)
	return out
}

// clipOf runs PreviewClip on a local file and reads the clip back: its samples and what the
// call measured.
func clipOf(t *testing.T, r *Runner, path string, length time.Duration) ([]int16, Measurement) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "clip.wav")
	m, err := r.PreviewClip(context.Background(), path, false, length, dst)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	wav, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	samples := wavSamples(t, wav)
	if m.Length != samplesTime(int64(len(samples))) {
		t.Errorf("%s: measured %v, the clip holds %d samples", filepath.Base(path), m.Length, len(samples))
	}
	return samples, m
}

// TestPreviewClipCutsBySamples: three minutes of speech give 30 s of it, every sample
// counted back from the WAV, and so do files whose clocks say far less than they hold (the
// same MP4 with its timescales multiplied by 100, so that -t 30 lets 50 minutes through; a
// FLAC of 10 hours behind a header of a minute); a recording shorter than the preview is
// given whole. Without the count (the sinks' limits) the MP4 gave its whole 3 minutes.
func TestPreviewClipCutsBySamples(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	mp3 := longSpeech(t, dir, "long.mp3", 0, 3*time.Minute)
	m4a := longSpeech(t, dir, "long.m4a", 0, 3*time.Minute)
	for _, path := range []string{mp3, m4a} {
		samples, m := clipOf(t, r, path, previewLength)
		if n := len(samples); n > 30*PCMRate || n < 29*PCMRate || !m.HasSpeech() {
			t.Errorf("%s: %d samples, %+v; want 30 s of them at most, not much less, with speech", filepath.Base(path), n, m)
		}
	}
	data, err := os.ReadFile(m4a)
	if err != nil {
		t.Fatal(err)
	}
	scaled := filepath.Join(dir, "scaled.m4a")
	if err := os.WriteFile(scaled, scaleTimescales(t, data, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(dir, "lying.flac")
	testkit.LyingFLAC(t, bomb, 8000, 10*time.Hour, time.Minute)
	for _, path := range []string{scaled, bomb} {
		if samples, m := clipOf(t, r, path, previewLength); len(samples) != 30*PCMRate {
			t.Errorf("%s: %d samples (%v), want exactly 30 s of them", filepath.Base(path), len(samples), m.Length)
		}
	}
	short := testkit.Speech(t, dir, "short.ogg", testkit.SampleSentence)
	whole, err := r.Measure(context.Background(), short, 0)
	if err != nil {
		t.Fatal(err)
	}
	if samples, _ := clipOf(t, r, short, previewLength); samplesTime(int64(len(samples))) != whole.Length {
		t.Errorf("a %v recording gave a clip of %d samples", whole.Length, len(samples))
	}
}

// TestPreviewClipSilentStart: 40 s of silence before the speech: a 30 s clip has none (the
// page then says so), a 50 s one has it.
func TestPreviewClipSilentStart(t *testing.T) {
	r := newRunner(t)
	path := longSpeech(t, t.TempDir(), "late.mp3", 40*time.Second, 20*time.Second)
	if _, m := clipOf(t, r, path, previewLength); m.HasSpeech() || m.Length != previewLength {
		t.Errorf("30 s of silence: %+v, want no speech in 30 s", m)
	}
	if _, m := clipOf(t, r, path, 50*time.Second); !m.HasSpeech() {
		t.Errorf("50 s, the last 10 spoken: %+v, want speech", m)
	}
}

// TestPreviewClipRefuses: files that are not audio fail as the upload's check fails them,
// and write no clip.
func TestPreviewClipRefuses(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.mp3")
	if err := os.WriteFile(text, []byte("these are my notes, not audio\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	silentVideo := filepath.Join(dir, "silent.mp4")
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "color=c=red:s=64x64:d=2", "-c:v", "libx264", "-preset", "ultrafast", silentVideo)
	tests := []struct {
		name, path string
		want       error
	}{
		{"text", text, ErrUnreadable},
		{"missing", filepath.Join(dir, "missing.mp3"), ErrUnreadable},
		{"video without audio", silentVideo, ErrNoAudio},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "clip.wav")
			_, err := r.PreviewClip(context.Background(), tt.path, false, previewLength, dst)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if _, statErr := os.Stat(dst); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("a clip was written (stat: %v)", statErr)
			}
		})
	}
}

// TestPreviewClipOpensNoOtherFile: playlists and concat scripts naming other files (an
// HLS playlist naming /etc/passwd among them) are refused; the secret they name gives a clip.
func TestPreviewClipOpensNoOtherFile(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	secret := testkit.Speech(t, dir, "secret.mp3", testkit.SampleSentence)
	uploads := hostileUploads(t, dir, secret)
	passwd := filepath.Join(dir, "passwd.m3u8")
	playlist := "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\n/etc/passwd\n#EXT-X-ENDLIST\n"
	if err := os.WriteFile(passwd, []byte(playlist), 0o644); err != nil {
		t.Fatal(err)
	}
	uploads["HLS playlist naming /etc/passwd"] = passwd
	for name, path := range uploads {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "clip.wav")
			m, err := r.PreviewClip(context.Background(), path, false, previewLength, dst)
			if !errors.Is(err, ErrUnreadable) && !errors.Is(err, ErrNoAudio) {
				t.Errorf("got %v of audio, err %v; want it refused", m.Length, err)
			}
		})
	}
	if _, m := clipOf(t, r, secret, previewLength); !m.HasSpeech() {
		t.Errorf("the secret itself: %+v", m)
	}
}

// TestPreviewClipCancelled: a decode that would wait forever (a FIFO nobody writes) ends
// promptly when ctx is cancelled, its ffmpeg killed.
func TestPreviewClipCancelled(t *testing.T) {
	r := newRunner(t)
	testkit.NoChildren(t)
	fifo := filepath.Join(t.TempDir(), "never.mp3")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := r.PreviewClip(ctx, fifo, false, previewLength, filepath.Join(t.TempDir(), "clip.wav"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > stopWithin {
		t.Errorf("cancel took %v", d)
	}
}
