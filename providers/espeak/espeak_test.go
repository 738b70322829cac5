package espeak

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/speechtest"
	"parla/providers/testkit"
)

func TestRate(t *testing.T) {
	tests := []struct {
		speed     float64
		wantWPM   int
		wantTempo float64
	}{
		{1, 175, 1},
		{0.5, 88, 87.5 / 88},
		{2, 350, 1},
		{0.25, 80, 43.75 / 80},
		{4, 450, 700.0 / 450},
		{3, 450, 525.0 / 450},
		{0.3, 80, 52.5 / 80},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.speed), func(t *testing.T) {
			wpm, tempo := Rate(tt.speed)
			if wpm != tt.wantWPM || math.Abs(tempo-tt.wantTempo) > 1e-9 {
				t.Errorf("Rate(%v) = %d wpm × %v, want %d × %v", tt.speed, wpm, tempo, tt.wantWPM, tt.wantTempo)
			}
			if got := float64(wpm) * tempo; math.Abs(got-175*tt.speed) > 0.01*175*tt.speed {
				t.Errorf("effective rate %v, want %v", got, 175*tt.speed)
			}
		})
	}
}

// setup finds the programs and returns an engine using them.
func setup(t testing.TB, cfg Config) *Speaker {
	t.Helper()
	testkit.Binary(t, "espeak-ng")
	testkit.Binary(t, "kakasi")
	testkit.Binary(t, "ffmpeg")
	testkit.Binary(t, "ffprobe")
	if cfg.Media == nil {
		cfg.Media = media.New(media.Config{TempDir: t.TempDir()})
	}
	s := New(cfg)
	if err := s.Available(); err != nil {
		t.Fatal(err)
	}
	return s
}

// espeakDuration is how long espeak-ng's own output for text is, measured from its samples.
func espeakDuration(t *testing.T, text, variant string, wpm int) time.Duration {
	t.Helper()
	cmd := exec.Command("espeak-ng", "--stdout", "-b", "1", "-v", variant, "-s", fmt.Sprint(wpm))
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("espeak-ng: %v", err)
	}
	r := bytes.NewReader(out)
	f, err := media.ReadWAVHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(float64(r.Len()) / float64(f.SampleRate*f.Channels*2) * float64(time.Second))
}

// speak runs one request and probes the result.
func speak(t *testing.T, s *Speaker, req providers.SpeechRequest) ([]byte, media.ProbeInfo) {
	t.Helper()
	return speechtest.Speak(t, s, req)
}

// near reports got within tolerance (relative) of want, plus 80 ms for the encoder delay and
// padding that lossy codecs add at the ends.
func near(got, want time.Duration, tolerance float64) bool {
	d := math.Abs(float64(got - want))
	return d <= tolerance*float64(want)+float64(80*time.Millisecond)
}

const sample = "Hello! This is Parla, reading a short text aloud. Does it sound right?"

func TestSpeakFormats(t *testing.T) {
	s := setup(t, Config{})
	want := espeakDuration(t, sample, "en-us", 175)
	for _, format := range providers.SpeechFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			_, info := speak(t, s, providers.SpeechRequest{Voice: "alloy", Text: sample, Format: format, Speed: 1})
			f, _ := media.Format(format)
			if info.Codec != f.Codec {
				t.Errorf("codec %q, want %q", info.Codec, f.Codec)
			}
			if !near(info.Duration, want, 0.02) {
				t.Errorf("duration %v, want about %v", info.Duration, want)
			}
		})
	}
}

func TestSpeakVoicesDiffer(t *testing.T) {
	s := setup(t, Config{})
	var mu sync.Mutex
	sums := map[[32]byte]string{}
	t.Run("voices", func(t *testing.T) {
		for _, voice := range providers.Voices {
			t.Run(voice, func(t *testing.T) {
				t.Parallel()
				data, info := speak(t, s, providers.SpeechRequest{Voice: voice, Text: sample, Format: "flac", Speed: 1})
				variant, _ := Voice(voice, "en")
				want := espeakDuration(t, sample, variant, 175)
				if info.Codec != "flac" || !near(info.Duration, want, 0.02) {
					t.Errorf("got %s for %v, want flac for %v", info.Codec, info.Duration, want)
				}
				mu.Lock()
				defer mu.Unlock()
				sum := sha256.Sum256(data)
				if other, dup := sums[sum]; dup {
					t.Errorf("voice %q sounds exactly like %q", voice, other)
				}
				sums[sum] = voice
			})
		}
	})
	if len(sums) != len(providers.Voices) {
		t.Errorf("%d distinct outputs for %d voices", len(sums), len(providers.Voices))
	}
}

func TestSpeakSpeeds(t *testing.T) {
	s := setup(t, Config{})
	var last time.Duration
	for _, speed := range []float64{0.25, 0.5, 1, 2, 4} {
		t.Run(fmt.Sprint(speed), func(t *testing.T) {
			_, info := speak(t, s, providers.SpeechRequest{Voice: "nova", Text: sample, Format: "mp3", Speed: speed})
			wpm, tempo := Rate(speed)
			want := time.Duration(float64(espeakDuration(t, sample, "en-us+f3", wpm)) / tempo)
			if !near(info.Duration, want, 0.05) {
				t.Errorf("duration %v, want about %v", info.Duration, want)
			}
			if last != 0 && info.Duration >= last {
				t.Errorf("speed %v lasts %v, not shorter than the slower %v", speed, info.Duration, last)
			}
			last = info.Duration
		})
	}
}

// TestSpeakChunked forces small chunks and checks that the samples of every chunk arrive, in
// full and in order: the lossless result lasts exactly as long as the chunks together.
func TestSpeakChunked(t *testing.T) {
	s := setup(t, Config{ChunkChars: 120})
	text := strings.Repeat("The rain in Spain stays mainly in the plain. Where does it rain? ", 12)
	chunks := planned(t, text, 120)
	if len(chunks) < 6 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	var want time.Duration
	for _, c := range chunks {
		want += espeakDuration(t, c, "en-gb+f4", 175)
	}
	var mu sync.Mutex
	var seen []int
	req := providers.SpeechRequest{Voice: "shimmer", Text: text, Format: "flac", Speed: 1,
		Progress: func(p int) { mu.Lock(); seen = append(seen, p); mu.Unlock() }}
	_, info := speak(t, s, req)
	if !near(info.Duration, want, 0.002) {
		t.Errorf("duration %v, want %v (sum of %d chunks)", info.Duration, want, len(chunks))
	}
	if len(seen) < len(chunks) || seen[0] != 0 || seen[len(seen)-1] != 100 {
		t.Errorf("progress %v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Errorf("progress went back: %v", seen)
		}
	}
}

func TestSpeakTextThatLooksLikeAnOption(t *testing.T) {
	s := setup(t, Config{})
	_, info := speak(t, s, providers.SpeechRequest{Voice: "echo", Text: "--help -v xx --stdout", Format: "opus", Speed: 1})
	if info.Codec != "opus" || info.Duration < 500*time.Millisecond {
		t.Errorf("got %s lasting %v, want spoken words", info.Codec, info.Duration)
	}
}

func TestSpeakRejects(t *testing.T) {
	s := New(Config{})
	tests := []struct {
		name string
		req  providers.SpeechRequest
	}{
		{"voice", providers.SpeechRequest{Voice: "ash", Text: "hi", Format: "mp3", Speed: 1}},
		{"format", providers.SpeechRequest{Voice: "alloy", Text: "hi", Format: "wav", Speed: 1}},
		{"slow", providers.SpeechRequest{Voice: "alloy", Text: "hi", Format: "mp3", Speed: 0.1}},
		{"fast", providers.SpeechRequest{Voice: "alloy", Text: "hi", Format: "mp3", Speed: 4.5}},
		{"nan", providers.SpeechRequest{Voice: "alloy", Text: "hi", Format: "mp3", Speed: math.NaN()}},
		{"empty", providers.SpeechRequest{Voice: "alloy", Text: " \n ", Format: "mp3", Speed: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := s.Speak(context.Background(), tt.req, &out); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestSpeakCancelled(t *testing.T) {
	testkit.NoChildren(t)
	s := setup(t, Config{ChunkChars: 200})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	// 620,000 characters: about twelve hours of speech, minutes of work for espeak-ng and
	// ffmpeg on any machine, so stopping within 20 s (a loaded runner included) proves the
	// cancel, and NoChildren that every process was stopped.
	text := strings.Repeat("This goes on for a long while. ", 20000)
	start := time.Now()
	err := s.Speak(ctx, providers.SpeechRequest{Voice: "onyx", Text: text, Format: "aac", Speed: 1}, &bytes.Buffer{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestAvailable(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no espeak", Config{Binary: "no-such-espeak-ng"}},
		{"no ffmpeg", Config{Media: media.New(media.Config{FFmpeg: "no-such-ffmpeg"})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := New(tt.cfg).Available(); !errors.Is(err, providers.ErrUnavailable) {
				t.Errorf("got %v, want ErrUnavailable", err)
			}
		})
	}
}

// TestSpeakChunkFails makes espeak-ng fail on the middle chunk: the error names the chunk
// and espeak-ng's complaint, and no file is delivered.
func TestSpeakChunkFails(t *testing.T) {
	testkit.NoChildren(t)
	espeak := testkit.Binary(t, "espeak-ng")
	fake := filepath.Join(t.TempDir(), "espeak-ng")
	script := "#!/bin/sh\ntext=$(cat)\ncase \"$text\" in *Broken*) echo 'no such voice data' >&2; exit 1;; esac\n" +
		"printf '%s' \"$text\" | exec " + espeak + " \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := setup(t, Config{Binary: fake, ChunkChars: 60})
	text := "The first chunk is fine and ends right here. Broken is the second one, it fails. " +
		"The third chunk would be fine again but never counts."
	if n := len(planned(t, text, 60)); n != 3 {
		t.Fatalf("%d chunks, want 3", n)
	}
	var out bytes.Buffer
	err := s.Speak(context.Background(), providers.SpeechRequest{Voice: "alloy", Text: text, Format: "flac", Speed: 1}, &out)
	if err == nil || !strings.Contains(err.Error(), "piece 2 of 3") || !strings.Contains(err.Error(), "no such voice data") {
		t.Errorf("got %v, want chunk 2's espeak-ng error", err)
	}
	if out.Len() != 0 {
		t.Errorf("%d bytes delivered", out.Len())
	}
}

func TestChunkSize(t *testing.T) {
	tests := []struct {
		n, workers, max, want int
	}{
		{1000, 2, 8000, 1500},     // short: one chunk, no split below minChunk
		{3000, 2, 8000, 1500},     // two chunks of minChunk
		{10000, 2, 8000, 5000},    // one round of 2 workers
		{50000, 2, 8000, 6250},    // 7 chunks of 8000 would leave a core idle: 8 of 6250
		{50000, 4, 8000, 6250},    // 4 workers: 2 rounds of 4
		{200000, 2, 8000, 7693},   // long: 26 chunks within the maximum
		{780, 2, 120, 120},        // a small maximum wins over minChunk
		{50000, 0, 8000, 7143},    // no workers means one: 7 chunks
		{50000, 1, 100000, 50000}, // one worker, one chunk
		{50000, 2, 14000, 12500},  // two rounds of 2 workers
		{50000, 2, 25000, 25000},  // the default maximum: one round of 2 workers
		{100000, 2, 25000, 25000}, // two rounds
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n, "/", tt.workers, "/", tt.max), func(t *testing.T) {
			if got := chunkSize(tt.n, tt.workers, tt.max); got != tt.want {
				t.Errorf("chunkSize = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestPlanEvenChunks: a 50,000-character text is planned as whole rounds of chunks for 2
// workers, each within a sentence of an even share, so both workers end together.
func TestPlanEvenChunks(t *testing.T) {
	const sentence = "Some words make a sentence here. "
	text := strings.Repeat(sentence, 1516)[:50000]
	for _, max := range []int{8000, 14000, 25000} {
		chunks, err := plan(providers.SpeechRequest{Voice: "alloy", Text: text}, chunkSize(50000, 2, max))
		if err != nil {
			t.Fatal(err)
		}
		if len(chunks)%2 != 0 {
			t.Errorf("maximum %d: %d chunks for 2 workers", max, len(chunks))
		}
		for i, c := range chunks {
			if d := len(c.Text) - 50000/len(chunks); d > len(sentence) || d < -len(sentence) {
				t.Errorf("maximum %d: chunk %d of %d has %d characters", max, i, len(chunks), len(c.Text))
			}
		}
	}
}

// planned is the text of each chunk that plan makes of an English text for chunks of
// size characters: what Speak gives espeak-ng when its ChunkChars is size (under 1500).
func planned(t *testing.T, text string, size int) []string {
	t.Helper()
	chunks, err := plan(providers.SpeechRequest{Voice: "alloy", Text: text}, size)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	return texts
}

func TestArgs(t *testing.T) {
	got := Args("en-gb+f4", 350)
	want := []string{"--stdout", "-b", "1", "-v", "en-gb+f4", "-s", "350"}
	if !slices.Equal(got, want) {
		t.Errorf("Args = %q, want %q", got, want)
	}
}

// TestSpeakLongFormats reads a text of many chunks in every format: the file decodes
// without an error, lasts as long as the chunks' own audio together (plus at most the
// encoder's delay and padding at each seam, none for FLAC) and carries one header; progress
// rises with the chunks to 100.
func TestSpeakLongFormats(t *testing.T) {
	const size = 200
	s := setup(t, Config{ChunkChars: size, Workers: 3})
	text := strings.Repeat("The rain in Spain stays mainly in the plain. Where does it rain? ", 14)
	chunks := planned(t, text, size)
	if len(chunks) < 5 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	var want time.Duration
	for _, c := range chunks {
		want += espeakDuration(t, c, "en-us+m7", 175)
	}
	slack := map[string]time.Duration{"mp3": 80 * time.Millisecond, "aac": 95 * time.Millisecond, "opus": 30 * time.Millisecond, "flac": 0}
	for _, format := range providers.SpeechFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []int
			req := providers.SpeechRequest{Voice: "onyx", Text: text, Format: format, Speed: 1,
				Progress: func(p int) { mu.Lock(); seen = append(seen, p); mu.Unlock() }}
			data, info := speak(t, s, req)
			max := want + time.Duration(len(chunks))*slack[format] + time.Millisecond
			if info.Duration < want-time.Millisecond || info.Duration > max {
				t.Errorf("duration %v, want %v (%d chunks) to %v", info.Duration, want, len(chunks), max)
			}
			f, _ := media.Format(format)
			path := filepath.Join(t.TempDir(), "long."+f.Ext)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-")
			if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("decoding: %v: %.500s", err, out)
			}
			// One header: mp3 starts with a frame (no ID3 tag) and holds no Xing/Info frame;
			// the others hold their header once. (media's tests walk every frame and page.)
			headers := map[string]string{"mp3": "Xing", "opus": "OpusHead", "aac": "moov", "flac": "fLaC"}
			wantHeaders := map[string]int{"mp3": 0, "opus": 1, "aac": 1, "flac": 1}
			if n := bytes.Count(data, []byte(headers[format])); n != wantHeaders[format] {
				t.Errorf("%d %q in the file, want %d", n, headers[format], wantHeaders[format])
			}
			if format == "mp3" && (data[0] != 0xff || bytes.Contains(data, []byte("Info\x00\x00\x00"))) {
				t.Errorf("mp3 starts with % x, or holds an Info frame", data[:4])
			}
			if len(seen) < len(chunks)+2 || seen[0] != 0 || seen[len(seen)-1] != 100 {
				t.Errorf("progress %v", seen)
			}
			for i := 1; i < len(seen); i++ {
				if seen[i] < seen[i-1] {
					t.Errorf("progress went back: %v", seen)
				}
			}
		})
	}
}
