package api

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"parla/media"
	"parla/providers"
	"parla/providers/speechroute"
)

// switchedSpeaker is an engine that can be taken down and brought back; it says its name
// in every file it speaks.
type switchedSpeaker struct {
	name string
	down bool
}

func (s *switchedSpeaker) Speak(_ context.Context, req providers.SpeechRequest, w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s says %q", s.name, req.Text)
	return err
}

func (s *switchedSpeaker) Available() error {
	if s.down {
		return fmt.Errorf("%w: %s is down", providers.ErrUnavailable, s.name)
	}
	return nil
}

// TestSampleKeptByTheEngineThatSpokeIt: issue 40's finding — with TTS_ENGINE=openai,espeak
// and Kokoro down at the first request, eSpeak's sample was kept under the voice and
// locale alone and served on after Kokoro came back. The sample is kept by the engine that
// reads its language now: Kokoro's own once it is back, eSpeak's again (from the cache)
// when it falls back, and one engine alone keeps the plain key.
func TestSampleKeptByTheEngineThatSpokeIt(t *testing.T) {
	kokoro := &switchedSpeaker{name: "Kokoro", down: true}
	espeak := &switchedSpeaker{name: "eSpeak NG"}
	router := speechroute.New([]speechroute.Engine{
		{Name: "openai", Label: "Kokoro", Speaker: kokoro, Languages: []string{"en", "es"}},
		{Name: "espeak", Label: "eSpeak NG", Speaker: espeak, Languages: []string{"en", "es", "de"}},
	}, media.New(media.Config{}), t.TempDir())
	sc := newSampleCache(t.TempDir(), router)
	sample := func() (string, string) {
		t.Helper()
		p, engine, err := sc.path(context.Background(), "echo", "en", router.Languages(), router.EngineFor)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), engine
	}
	if got, engine := sample(); got[:len("eSpeak NG")] != "eSpeak NG" || engine != "eSpeak NG" {
		t.Fatalf("with Kokoro down: %q from %q; want eSpeak's", got, engine)
	}
	kokoro.down = false
	if got, engine := sample(); got[:len("Kokoro")] != "Kokoro" || engine != "Kokoro" {
		t.Errorf("with Kokoro back: %q from %q; want Kokoro's, not eSpeak's kept", got, engine)
	}
	kokoro.down = true
	espeak.name = "eSpeak NG, again" // a second production would say so
	if got, _ := sample(); got[:len("eSpeak NG says")] != "eSpeak NG says" {
		t.Errorf("with Kokoro down again: %q; want eSpeak's first sample, from the cache", got)
	}

	one := newSampleCache(t.TempDir(), espeak)
	p, engine, err := one.path(context.Background(), "echo", "en", []string{"en"}, func(string) string { return "" })
	if err != nil || engine != "" || !fileIs(p, "echo-en.mp3") {
		t.Errorf("one engine: %s, %q, %v; want echo-en.mp3", p, engine, err)
	}
}

func fileIs(path, name string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Name() == name
}
