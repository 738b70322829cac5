package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"parla/media"
	"parla/providers"
)

// kokoroVoices are Kokoro-82M v1.0's voices by the language they read (its VOICES.md): the
// first letter names the language (a American, b British English, e Spanish, f French,
// h Hindi, i Italian, j Japanese, p Brazilian Portuguese, z Mandarin), the second the
// gender.
var kokoroVoices = map[string][]string{
	"en": {"af_alloy", "af_aoede", "af_bella", "af_heart", "af_jessica", "af_kore", "af_nicole", "af_nova",
		"af_river", "af_sarah", "af_sky", "am_adam", "am_echo", "am_eric", "am_fenrir", "am_liam", "am_michael",
		"am_onyx", "am_puck", "am_santa", "bf_alice", "bf_emma", "bf_isabella", "bf_lily", "bm_daniel",
		"bm_fable", "bm_george", "bm_lewis"},
	"es": {"ef_dora", "em_alex", "em_santa"},
	"fr": {"ff_siwis"},
	"hi": {"hf_alpha", "hf_beta", "hm_omega", "hm_psi"},
	"it": {"if_sara", "im_nicola"},
	"ja": {"jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"},
	"pt": {"pf_dora", "pm_alex", "pm_santa"},
	"zh": {"zf_xiaobei", "zf_xiaoni", "zf_xiaoxiao", "zf_xiaoyi", "zm_yunjian", "zm_yunxi", "zm_yunxia", "zm_yunyang"},
}

// kokoroServer makes fakeAPI answer as Kokoro-FastAPI's /v1/audio/speech does: models
// kokoro, tts-1 and tts-1-hd only (400 invalid_model otherwise), its own voices and
// OpenAI's six names (400 "Voice '…' not found" otherwise), errors in FastAPI's
// {"detail":{…}} shape, and audio streamed in chunks (Transfer-Encoding: chunked, no
// length), as it answers by default. With cut set, a stream stops half-way without its
// last chunk, as when the server fails while it speaks.
type kokoroServer struct {
	cut atomic.Bool
}

func (k *kokoroServer) refuse(w http.ResponseWriter, c speechCall) bool {
	if !slices.Contains([]string{"kokoro", "tts-1", "tts-1-hd"}, c.Model) {
		kokoroError(w, "invalid_model", "Unsupported model: "+c.Model)
		return true
	}
	if !slices.Contains(providers.Voices, c.Voice) && !slices.Contains(slices.Concat(valuesOf(kokoroVoices)...), c.Voice) {
		kokoroError(w, "validation_error", fmt.Sprintf("Voice '%s' not found. Available voices: af_alloy, …", c.Voice))
		return true
	}
	return false
}

func kokoroError(w http.ResponseWriter, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, `{"detail":{"error":%q,"message":%q,"type":"invalid_request_error"}}`, code, message)
}

// stream writes the audio in 4 KiB chunks, flushing each.
func (k *kokoroServer) stream(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Type", "audio/mpeg")
	w.Header().Set("X-Accel-Buffering", "no")
	end := len(data)
	if k.cut.Load() {
		end /= 2
	}
	for i := 0; i < end; i += 4096 {
		w.Write(data[i:min(i+4096, end)])
		w.(http.Flusher).Flush()
	}
	if k.cut.Load() {
		panic(http.ErrAbortHandler) // the connection closes without the last chunk
	}
}

func valuesOf(m map[string][]string) [][]string {
	var out [][]string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func newKokoro(t *testing.T, voices VoiceMap, model string) (*fakeAPI, *kokoroServer, *Speaker) {
	t.Helper()
	api, srv := newFakeAPI(t)
	api.kokoro = &kokoroServer{}
	s := NewSpeaker(Config{BaseURL: srv.URL + "/v1", Model: model, Voices: voices,
		Media: media.New(media.Config{TempDir: t.TempDir()})})
	return api, api.kokoro, s
}

func kokoroMap(t *testing.T) VoiceMap {
	t.Helper()
	m, err := ShippedVoices("kokoro")
	if err != nil || m == nil {
		t.Fatalf("kokoro's map: %v, %v", m, err)
	}
	return m
}

// TestKokoroAnswersStreamed: a streamed (chunked) answer of unknown length is read whole,
// in one call and in a joined text; a stream cut short is an error, never a shorter file.
func TestKokoroAnswersStreamed(t *testing.T) {
	_, k, s := newKokoro(t, kokoroMap(t), "kokoro")
	short := strings.Repeat("A streamed answer, read to its end. ", 20)
	long := strings.Repeat("A streamed answer, read to its end. ", 150) // two calls
	for _, text := range []string{short, long} {
		info := speak(t, s, providers.SpeechRequest{Voice: "nova", Text: text, Format: "mp3", Speed: 1, Language: "en"})
		if !near(info.Duration, audioFor(text), 0.02) {
			t.Errorf("%d characters: %v of audio, want about %v", len(text), info.Duration, audioFor(text))
		}
	}
	k.cut.Store(true)
	for _, text := range []string{short, long} {
		var out bytes.Buffer
		err := s.Speak(context.Background(), providers.SpeechRequest{Voice: "nova", Text: text, Format: "mp3", Speed: 1}, &out)
		if err == nil {
			t.Errorf("%d characters: a stream cut half-way gave %d bytes and no error", len(text), out.Len())
		}
	}
}

// TestKokoroErrorsAreClear: Kokoro-FastAPI's refusals ({"detail":{…}}, not OpenAI's
// {"error":{…}}) reach the operator's log with their status, code and message, and are
// final (providers.ErrRefused).
func TestKokoroErrorsAreClear(t *testing.T) {
	tests := []struct {
		name, model string
		voices      VoiceMap
		want        []string
	}{
		{"unknown model", "kokoro-v9", nil, []string{"400", "invalid_model", "Unsupported model: kokoro-v9"}},
		{"unknown voice", "kokoro", VoiceMap{allLanguages: {"alloy": "af_nobody"}},
			[]string{"400", "validation_error", "Voice 'af_nobody' not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, s := newKokoro(t, tt.voices, tt.model)
			err := s.Speak(context.Background(), providers.SpeechRequest{Voice: "alloy", Text: "Hello.", Format: "mp3", Speed: 1}, &bytes.Buffer{})
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v lacks %q", err, want)
				}
			}
			if err != nil && strings.Contains(err.Error(), "%!") {
				t.Errorf("error %v has a formatting mistake", err)
			}
			if HTTPStatus(err) != http.StatusBadRequest {
				t.Errorf("HTTPStatus = %d", HTTPStatus(err))
			}
			if !errors.Is(err, providers.ErrRefused) {
				t.Errorf("a refusal is not final: %v", err)
			}
			if err := s.Available(); err != nil {
				t.Errorf("a refusal closed the engine: %v", err)
			}
		})
	}
}

// TestSpeakEachParagraphInItsLanguagesVoice: with Kokoro's map, a text that mixes
// languages is spoken paragraph by paragraph, each with the product voice's Kokoro voice
// of its language, in order, no call over MaxInputChars; a text in one language named by
// the visitor goes whole to that language's voice.
func TestSpeakEachParagraphInItsLanguagesVoice(t *testing.T) {
	api, _, s := newKokoro(t, kokoroMap(t), "kokoro")
	english := "The weather is lovely today, and we are going for a long walk by the river.\n"
	spanish := strings.Repeat("Mañana vamos a visitar a nuestros abuelos en el pueblo, porque hace mucho que no los vemos. ", 50) + "\n"
	text := english + spanish + english
	speak(t, s, providers.SpeechRequest{Voice: "echo", Text: text, Format: "mp3", Speed: 1, Language: "en", DetectParagraphs: true})
	calls := api.received()
	var voices, inputs []string
	for _, c := range calls {
		if n := utf8.RuneCountInString(c.Input); n > MaxInputChars {
			t.Errorf("a call of %d characters", n)
		}
		if c.Model != "kokoro" || c.Auth != "" {
			t.Errorf("call %+v", c)
		}
		voices = append(voices, c.Voice)
		inputs = append(inputs, c.Input)
	}
	want := []string{"am_echo", "em_alex", "em_alex", "am_echo"} // Spanish: 4,650 characters, two calls
	if !slices.Equal(voices, want) {
		t.Errorf("voices %v, want %v", voices, want)
	}
	if strings.Join(strings.Fields(strings.Join(inputs, " ")), " ") != strings.Join(strings.Fields(text), " ") {
		t.Error("the calls joined do not give the text back in order")
	}

	before := len(api.received())
	speak(t, s, providers.SpeechRequest{Voice: "shimmer", Text: "Bonjour à tous.", Format: "mp3", Speed: 1, Language: "fr"})
	if c := api.received()[before:]; len(c) != 1 || c[0].Voice != "ff_siwis" {
		t.Errorf("French, chosen: %+v", c)
	}
	if got := s.Languages(); !slices.Equal(got, []string{"en", "es", "fr", "hi", "it", "ja", "pt", "zh"}) {
		t.Errorf("Kokoro's languages = %v", got)
	}
}

// TestCallTimeout: a server that never answers, or stops in the middle of its answer,
// fails the call after CallTimeout, saying so, and is not judged down for it.
func TestCallTimeout(t *testing.T) {
	for _, partial := range []bool{false, true} {
		t.Run(fmt.Sprintf("partial=%v", partial), func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if partial {
					w.Write([]byte("ID3")) // the start of an answer, then nothing
					w.(http.Flusher).Flush()
				}
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}))
			defer func() { close(release); srv.Close() }()
			s := NewSpeaker(Config{BaseURL: srv.URL + "/v1", CallTimeout: 300 * time.Millisecond})
			start := time.Now()
			err := s.Speak(context.Background(), providers.SpeechRequest{Voice: "alloy", Text: "Hello.", Format: "mp3", Speed: 1}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), "no whole answer within 300ms") || time.Since(start) > 5*time.Second {
				t.Errorf("after %v: %v", time.Since(start), err)
			}
			if err := s.Available(); err != nil {
				t.Errorf("a slow server was judged down: %v", err)
			}
		})
	}
}
