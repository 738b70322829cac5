package media

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
)

// sine makes seconds of a 440 Hz tone with ffmpeg's own generator, as WAV or raw PCM.
func sine(t *testing.T, seconds float64, rate int, container string) []byte {
	t.Helper()
	ffmpeg := testkit.Binary(t, "ffmpeg")
	cmd := exec.Command(ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate="+strconv.Itoa(rate)+":duration="+strconv.FormatFloat(seconds, 'f', -1, 64),
		"-ac", "1", "-c:a", "pcm_s16le", "-f", container, "pipe:1")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("making a test tone: %v: %s", err, stderr.String())
	}
	return out.Bytes()
}

func newRunner(t *testing.T) *Runner {
	t.Helper()
	testkit.Binary(t, "ffmpeg")
	testkit.Binary(t, "ffprobe")
	ffmpeg, ffprobe := toolsUnderTest() // PARLA_FFMPEG (build_test.go)
	r := New(Config{FFmpeg: ffmpeg, FFprobe: ffprobe, MaxConcurrent: 2, TempDir: t.TempDir()})
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	return r
}

// probeBytes writes data to a file and probes it.
func probeBytes(t *testing.T, r *Runner, data []byte, ext string) ProbeInfo {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out."+ext)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := r.Probe(context.Background(), path)
	if err != nil {
		t.Fatalf("probing encoded file: %v", err)
	}
	return info
}

// near reports got within tolerance (relative) of want, plus 80 ms for the encoder delay and
// padding that lossy codecs add at the ends.
func near(got, want time.Duration, tolerance float64) bool {
	d := math.Abs(float64(got - want))
	return d <= tolerance*float64(want)+float64(80*time.Millisecond)
}

func TestEncode(t *testing.T) {
	r := newRunner(t)
	wav := sine(t, 3, 22050, "wav")
	pcm := sine(t, 3, 24000, "s16le")
	tests := []struct {
		name  string
		in    Input
		data  []byte
		tempo float64
		want  time.Duration
	}{
		{"wav", WAV, wav, 0, 3 * time.Second},
		{"pcm", PCM(24000, 1), pcm, 1, 3 * time.Second},
		{"pcm at double speed", PCM(24000, 1), pcm, 2, 1500 * time.Millisecond},
		{"wav at quarter speed", WAV, wav, 0.25, 12 * time.Second},
	}
	for _, format := range []string{MP3, Opus, AAC, FLAC} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				var out bytes.Buffer
				err := r.Encode(context.Background(), tt.in, bytes.NewReader(tt.data), EncodeOptions{Format: format, Tempo: tt.tempo}, &out)
				if err != nil {
					t.Fatal(err)
				}
				f, _ := Format(format)
				info := probeBytes(t, r, out.Bytes(), f.Ext)
				if info.Codec != f.Codec {
					t.Errorf("codec %q, want %q", info.Codec, f.Codec)
				}
				// mp3 and opus carry encoder delay and padding (some tens of milliseconds).
				if !near(info.Duration, tt.want, 0.02) {
					t.Errorf("duration %v, want about %v", info.Duration, tt.want)
				}
			})
		}
	}
}

func TestEncodeRemuxesADTS(t *testing.T) {
	r := newRunner(t)
	var adts bytes.Buffer
	wav := sine(t, 2, 24000, "wav")
	args := []string{"-nostdin", "-loglevel", "error", "-f", "wav", "-i", "pipe:0", "-c:a", "aac", "-f", "adts", "pipe:1"}
	if err := r.FFmpeg(context.Background(), args, bytes.NewReader(wav), &adts); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := r.Encode(context.Background(), ADTS, &adts, EncodeOptions{Format: AAC}, &out); err != nil {
		t.Fatal(err)
	}
	info := probeBytes(t, r, out.Bytes(), "m4a")
	if info.Codec != "aac" || !strings.Contains(info.Container, "mp4") || !near(info.Duration, 2*time.Second, 0.03) {
		t.Errorf("got %+v, want 2 s of AAC in MP4", info)
	}
}

func TestEncodeFailureCarriesStderr(t *testing.T) {
	r := newRunner(t)
	var out bytes.Buffer
	// Not PCM WAV: ffmpeg's wav demuxer refuses it and says so on stderr.
	err := r.Encode(context.Background(), WAV, strings.NewReader("definitely not audio"), EncodeOptions{Format: MP3}, &out)
	if err == nil {
		t.Fatal("encoding garbage succeeded")
	}
	if !strings.Contains(err.Error(), "encoding mp3") || !strings.Contains(err.Error(), "pipe:0") {
		t.Errorf("error lacks context or ffmpeg's stderr: %v", err)
	}
}

func TestFFmpegWaitsForSlotAndHonoursContext(t *testing.T) {
	r := New(Config{MaxConcurrent: 1})
	r.sem <- struct{}{} // the only slot is busy
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := r.FFmpeg(ctx, []string{"-version"}, nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error while waiting for the slot", err)
	}
}

// endless reads silence for ever.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestCancelKillsFFmpeg(t *testing.T) {
	r := newRunner(t)
	testkit.NoChildren(t) // the proof of the kill: no ffmpeg left
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	// An endless input: only cancellation ends it. (Raw PCM on stdin rather than ffmpeg's
	// lavfi generator, which the image's ffmpeg does not have: see TestFFmpegBuild.)
	err := r.FFmpeg(ctx, []string{"-loglevel", "error", "-re", "-f", "s16le", "-ar", "8000", "-ac", "1", "-i", "pipe:0", "-f", "null", "-"}, endless{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// The input never ends: returning at all proves the kill; stopWithin that it was prompt.
	if d := time.Since(start); d > stopWithin {
		t.Errorf("cancel took %v", d)
	}
}

func TestProbe(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	wavPath := filepath.Join(dir, "-starts-with-dash.wav")
	if err := os.WriteFile(wavPath, sine(t, 2.5, 16000, "wav"), 0o600); err != nil {
		t.Fatal(err)
	}
	textPath := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(textPath, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("audio", func(t *testing.T) {
		info, err := New(Config{}).Probe(context.Background(), wavPath)
		if err != nil {
			t.Fatal(err)
		}
		if info.Codec != "pcm_s16le" || info.SampleRate != 16000 || info.Channels != 1 || info.Container != "wav" {
			t.Errorf("got %+v", info)
		}
		if !near(info.Duration, 2500*time.Millisecond, 0.01) {
			t.Errorf("duration %v, want 2.5s", info.Duration)
		}
	})
	t.Run("not media", func(t *testing.T) {
		if info, err := r.Probe(context.Background(), textPath); err == nil {
			t.Errorf("probing text succeeded: %+v", info)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := r.Probe(context.Background(), filepath.Join(dir, "nope.mp3"))
		if err == nil || !strings.Contains(err.Error(), "nope.mp3") {
			t.Errorf("got %v, want an error naming the file", err)
		}
	})
}

func TestParseProbe(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		want    ProbeInfo
		wantErr error
	}{
		{"format duration", `{"format":{"format_name":"mp3","duration":"1.500000","bit_rate":"128000"},"streams":[{"codec_type":"audio","codec_name":"mp3","sample_rate":"24000","channels":1}]}`,
			ProbeInfo{Duration: 1500 * time.Millisecond, Codec: "mp3", Container: "mp3", SampleRate: 24000, Channels: 1, BitRate: 128000}, nil},
		{"stream duration fallback", `{"format":{"format_name":"ogg","duration":"N/A"},"streams":[{"codec_type":"audio","codec_name":"opus","sample_rate":"48000","channels":2,"duration":"2.000000"}]}`,
			ProbeInfo{Duration: 2 * time.Second, Codec: "opus", Container: "ogg", SampleRate: 48000, Channels: 2}, nil},
		{"video first", `{"format":{"format_name":"mov,mp4","duration":"3"},"streams":[{"codec_type":"video","codec_name":"h264"},{"codec_type":"audio","codec_name":"aac","sample_rate":"44100","channels":2}]}`,
			ProbeInfo{Duration: 3 * time.Second, Codec: "aac", Container: "mov,mp4", SampleRate: 44100, Channels: 2, HasVideo: true}, nil},
		{"no audio", `{"format":{"format_name":"png_pipe"},"streams":[{"codec_type":"video","codec_name":"png"}]}`,
			ProbeInfo{Container: "png_pipe", HasVideo: true}, ErrNoAudio},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProbe([]byte(tt.json))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReadWAVHeader(t *testing.T) {
	wav := sine(t, 1, 22050, "wav")
	r := bytes.NewReader(wav)
	f, err := ReadWAVHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	if f != (WAVFormat{SampleRate: 22050, Channels: 1, BitsPerSample: 16}) {
		t.Errorf("format %+v", f)
	}
	if rest := r.Len(); rest != 22050*2 {
		t.Errorf("%d bytes of samples left, want %d", rest, 22050*2)
	}
	if _, err := ReadWAVHeader(strings.NewReader("RIFX....WAVEfmt ")); !errors.Is(err, ErrNotWAV) {
		t.Errorf("got %v, want ErrNotWAV", err)
	}
}

func TestTailBuffer(t *testing.T) {
	b := &TailBuffer{Limit: 8}
	b.Write([]byte("0123456789"))
	b.Write([]byte("ab"))
	if got := b.String(); got != "…456789ab" {
		t.Errorf("got %q", got)
	}
	short := &TailBuffer{}
	short.Write([]byte("fine"))
	if got := short.String(); got != "fine" {
		t.Errorf("got %q", got)
	}
}
