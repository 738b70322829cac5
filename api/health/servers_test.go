package health

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"parla/providers"
)

// local is a speech engine, or a transcriber, that calls no server (espeak-ng, whisper.cpp).
type local struct{}

func (local) Speak(context.Context, providers.SpeechRequest, io.Writer) error { return nil }
func (local) Transcribe(context.Context, providers.TranscribeRequest) (providers.Transcript, error) {
	return providers.Transcript{}, nil
}
func (local) Available() error { return nil }

// engine is one that calls the server at base (an OpenAI-compatible one), always down.
type engine struct {
	local
	base string
}

func (e engine) BaseURL() string { return e.base }
func (e engine) Check(context.Context) error {
	return errors.New(e.base + " does not answer")
}

// group is TTS_ENGINE as a list (providers/speechroute).
type group struct {
	local
	speakers []providers.Speaker
}

func (g group) Speakers() []providers.Speaker { return g.speakers }

// One server per base URL, with every service that calls it: a speech server that
// transcription shares is no spare, one behind which other speech engines wait is; an
// engine that calls no server has none. /readyz's checks are named by their services and
// optional as the spare and STT_ENGINE say.
func TestServersOnePerBaseURL(t *testing.T) {
	speech := group{speakers: []providers.Speaker{engine{base: "http://kokoro/v1"}, engine{base: "http://shared/v1"}, local{}}}
	servers := Servers(speech, engine{base: "http://shared/v1"})
	type row struct {
		base     string
		services []providers.Service
		spare    bool
	}
	var got []row
	for _, s := range servers {
		got = append(got, row{s.BaseURL, s.Services, s.Spare})
	}
	want := []row{{"http://kokoro/v1", []providers.Service{providers.TTS}, true},
		{"http://shared/v1", []providers.Service{providers.TTS, providers.STT, providers.VTT}, false}}
	if !slices.EqualFunc(got, want, func(a, b row) bool {
		return a.base == b.base && a.spare == b.spare && slices.Equal(a.services, b.services)
	}) {
		t.Fatalf("Servers = %+v, want %+v", got, want)
	}
	if s := Servers(local{}, nil); len(s) != 0 {
		t.Errorf("an engine without a server: %+v", s)
	}

	checks := ServerChecks(servers, false)
	if len(checks) != 2 {
		t.Fatalf("ServerChecks = %+v", checks)
	}
	for _, ch := range checks {
		if opt := map[string]bool{"server.tts": true, "server.tts+sst+vtt": false}; opt[ch.Name] != ch.Optional {
			t.Errorf("%s optional %v", ch.Name, ch.Optional)
		}
		if ch.Detail == "" || ch.Run(context.Background()) == nil {
			t.Errorf("%s: detail %q, and the check must ask the server", ch.Name, ch.Detail)
		}
	}
	transcription := ServerChecks(Servers(local{}, engine{base: "http://whisper/v1"}), false)
	if len(transcription) != 1 || transcription[0].Name != "server.sst+vtt" || !transcription[0].Optional {
		t.Errorf("a transcription server without STT_ENGINE: %+v", transcription)
	}
	if c := ServerChecks(Servers(local{}, engine{base: "http://whisper/v1"}), true); c[0].Optional {
		t.Error("a transcription server with STT_ENGINE is required")
	}
}
