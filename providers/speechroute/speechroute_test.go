package speechroute

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/speechlang"
	"parla/providers/testkit"
)

func TestChooseAndPlan(t *testing.T) {
	engines := []Engine{{Name: "openai", Languages: []string{"en", "es"}}, {Name: "espeak", Languages: []string{"en", "es", "tr"}}}
	all := func(int) bool { return true }
	firstClosed := func(i int) bool { return i != 0 }
	for _, tt := range []struct {
		lang string
		open func(int) bool
		want int
	}{{"en", all, 0}, {"tr", all, 1}, {"en", firstClosed, 1}, {"xx", all, -1}} {
		if got := Choose(engines, tt.lang, tt.open); got != tt.want {
			t.Errorf("Choose(%s) = %d, want %d", tt.lang, got, tt.want)
		}
	}
	spans := []speechlang.Span{{Language: "en", Text: "a\n"}, {Language: "es", Text: "b\n"}, {Language: "tr", Text: "c\n"}, {Language: "en", Text: "d\n"}}
	parts, err := plan(engines, spans, all)
	want := []part{{0, "en", true, "a\nb\n"}, {1, "tr", false, "c\n"}, {0, "en", false, "d\n"}}
	if err != nil || !slices.Equal(parts, want) {
		t.Errorf("plan = %+v, %v\nwant %+v", parts, err, want)
	}
	if _, err := plan(engines, []speechlang.Span{{Language: "xx", Text: "?"}}, all); err == nil {
		t.Error("a language no engine speaks was planned")
	}
}

// TestEngineFor: the engine a language is read by, as visitors see it, is the one Speak
// chooses: the first that speaks it, the next when that one is closed.
func TestEngineFor(t *testing.T) {
	neural, local := &toneSpeaker{}, &toneSpeaker{}
	r := New([]Engine{{Name: "openai", Label: "Kokoro", Speaker: neural, Languages: []string{"en", "es"}},
		{Name: "espeak", Label: "eSpeak NG", Speaker: local, Languages: []string{"en", "es", "tr"}}}, nil, "")
	got := []string{r.EngineFor("en"), r.EngineFor("tr"), r.EngineFor("xx")}
	if want := []string{"Kokoro", "eSpeak NG", ""}; !slices.Equal(got, want) {
		t.Errorf("EngineFor en, tr, xx = %q, want %q", got, want)
	}
	neural.closed = providers.ErrUnavailable
	if got := r.EngineFor("es"); got != "eSpeak NG" {
		t.Errorf("the first engine closed: Spanish by %q, want eSpeak NG", got)
	}
}

// toneSpeaker is an engine that answers every request with a second of a sine at its own
// sample rate and volume, in the requested format, and keeps the requests.
type toneSpeaker struct {
	rate   int
	volume float64
	closed error

	mu   sync.Mutex
	reqs []providers.SpeechRequest
}

func (s *toneSpeaker) Available() error { return s.closed }

func (s *toneSpeaker) Speak(ctx context.Context, req providers.SpeechRequest, w io.Writer) error {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if req.Format != media.FLAC && req.Format != media.MP3 {
		return fmt.Errorf("format %s", req.Format)
	}
	cmd := exec.CommandContext(ctx, "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi",
		"-i", fmt.Sprintf("sine=frequency=440:sample_rate=%d:duration=3", s.rate), "-af", fmt.Sprintf("volume=%g", s.volume),
		"-ac", "1", "-f", req.Format, "pipe:1")
	cmd.Stdout = w
	return cmd.Run()
}

// TestSpeakJoinsEachEnginesPart: an English, a Turkish and an English paragraph with an
// engine for English and one for Turkish: each engine gets its paragraphs in its language,
// and the parts, at two sample rates and 20 dB apart, are one file of all three, at one
// rate, within 3 dB of each other.
func TestSpeakJoinsEachEnginesPart(t *testing.T) {
	testkit.Binary(t, "ffmpeg")
	neural := &toneSpeaker{rate: 24000, volume: 0.05}
	local := &toneSpeaker{rate: 22050, volume: 0.5}
	r := New([]Engine{{Name: "openai", Speaker: neural, Languages: []string{"en", "es"}}, {Name: "espeak", Speaker: local, Languages: []string{"en", "es", "tr"}}},
		media.New(media.Config{TempDir: t.TempDir()}), t.TempDir())
	english := "The weather is lovely today, and we are going for a long walk by the river.\n"
	turkish := "Bugün hava çok güzel, öğleden sonra parkta uzun bir yürüyüş yapacağız.\n"
	var out bytes.Buffer
	req := providers.SpeechRequest{Voice: "nova", Text: english + turkish + english, Format: media.FLAC, Speed: 1,
		Language: "en", DetectParagraphs: true}
	if err := r.Speak(context.Background(), req, &out); err != nil {
		t.Fatal(err)
	}
	if len(neural.reqs) != 2 || len(local.reqs) != 1 || local.reqs[0].Language != "tr" || local.reqs[0].Text != turkish ||
		neural.reqs[0].Language != "en" || neural.reqs[0].Text != english {
		t.Fatalf("requests: neural %+v\nlocal %+v", neural.reqs, local.reqs)
	}
	samples := decode(t, out.Bytes())
	if d := time.Duration(len(samples)) * time.Second / joinRate; d < 8900*time.Millisecond || d > 9100*time.Millisecond {
		t.Errorf("%v of audio, want 9 s (three parts of 3 s)", d)
	}
	var levels []float64
	for i := range 3 { // the middle second of each part
		levels = append(levels, rmsDB(samples[i*3*joinRate+joinRate:i*3*joinRate+2*joinRate]))
	}
	if math.Abs(levels[0]-levels[1]) > 3 || math.Abs(levels[1]-levels[2]) > 3 {
		t.Errorf("levels %v dB: the parts are not matched in loudness", levels)
	}

	// The English engine closed: English goes to the next engine that speaks it.
	neural.closed = fmt.Errorf("openai speech: %w: server down", providers.ErrUnavailable)
	local.reqs = nil
	if err := r.Speak(context.Background(), req, &bytes.Buffer{}); err != nil || len(local.reqs) != 1 || !local.reqs[0].DetectParagraphs {
		t.Errorf("with the first engine closed: %v, %+v", err, local.reqs)
	}
	local.closed = neural.closed
	if err := r.Available(); !errors.Is(err, providers.ErrUnavailable) {
		t.Errorf("every engine closed: Available = %v", err)
	}
}

// decode returns a file's samples as mono 16-bit at joinRate.
func decode(t *testing.T, data []byte) []int16 {
	t.Helper()
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", "pipe:0", "-ac", "1", "-ar", fmt.Sprint(joinRate), "-f", "s16le", "pipe:1")
	cmd.Stdin = bytes.NewReader(data)
	raw, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	samples := make([]int16, len(raw)/2)
	binary.Read(bytes.NewReader(raw), binary.LittleEndian, samples)
	return samples
}

func rmsDB(s []int16) float64 {
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return 20 * math.Log10(math.Sqrt(sum/float64(len(s)))/32768)
}
