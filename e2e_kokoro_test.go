package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/api/orders"
	"parla/providers"
	"parla/providers/openai"
	"parla/providers/testkit"
)

// kokoroStandIn speaks Kokoro-FastAPI's protocol as the app meets it: GET /v1/models,
// POST /v1/audio/speech with its models (kokoro, tts-1, tts-1-hd) and voices (those of the
// shipped map, and OpenAI's six names), its {"detail":{…}} refusals, audio streamed in
// chunks. failFirst answers the first calls 500 processing_error, as when the model
// fails; hangFirst holds the first call until its client gives up.
type kokoroStandIn struct {
	*httptest.Server
	t         testing.TB
	voices    []string
	failFirst int
	hangFirst bool

	mu    sync.Mutex
	calls []map[string]any
}

func startKokoro(t testing.TB) *kokoroStandIn {
	m, err := openai.ShippedVoices("kokoro")
	if err != nil {
		t.Fatal(err)
	}
	k := &kokoroStandIn{t: t, voices: slices.Clone(providers.Voices)}
	for _, vs := range m {
		for _, v := range vs {
			k.voices = append(k.voices, v)
		}
	}
	k.Server = httptest.NewServer(http.HandlerFunc(k.serve))
	t.Cleanup(k.Close)
	return k
}

func (k *kokoroStandIn) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		w.Write([]byte(`{"object":"list","data":[{"id":"tts-1"},{"id":"kokoro"}]}`))
		return
	}
	if r.URL.Path != "/v1/audio/speech" {
		http.Error(w, `{"detail":"Not Found"}`, http.StatusNotFound)
		return
	}
	var req map[string]any
	json.NewDecoder(r.Body).Decode(&req)
	k.mu.Lock()
	k.calls = append(k.calls, req)
	n := len(k.calls)
	k.mu.Unlock()
	model, _ := req["model"].(string)
	voice, _ := req["voice"].(string)
	switch {
	case k.hangFirst && n == 1:
		<-r.Context().Done()
		return
	case n <= k.failFirst:
		kokoroRefusal(w, http.StatusInternalServerError, "processing_error", "CUDA out of memory")
		return
	case !slices.Contains([]string{"kokoro", "tts-1", "tts-1-hd"}, model):
		kokoroRefusal(w, http.StatusBadRequest, "invalid_model", "Unsupported model: "+model)
		return
	case !slices.Contains(k.voices, voice):
		kokoroRefusal(w, http.StatusBadRequest, "validation_error", fmt.Sprintf("Voice '%s' not found. Available voices: af_alloy, …", voice))
		return
	}
	format, _ := req["response_format"].(string)
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=330:duration=1",
		"-f", map[string]string{"mp3": "mp3", "pcm": "s16le", "aac": "adts", "flac": "flac", "opus": "ogg"}[format],
		"-ar", "24000", "-ac", "1", "pipe:1").Output()
	if err != nil {
		kokoroRefusal(w, http.StatusInternalServerError, "processing_error", err.Error())
		return
	}
	for i := 0; i < len(out); i += 4096 { // streamed, as Kokoro-FastAPI answers by default
		w.Write(out[i:min(i+4096, len(out))])
		w.(http.Flusher).Flush()
	}
}

func kokoroRefusal(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"detail":{"error":%q,"message":%q,"type":"invalid_request_error"}}`, code, message)
}

// received returns the voices and inputs of the speech calls so far.
func (k *kokoroStandIn) received() (voices, inputs []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range k.calls {
		v, _ := c["voice"].(string)
		in, _ := c["input"].(string)
		voices, inputs = append(voices, v), append(inputs, in)
	}
	return voices, inputs
}

func (k *kokoroStandIn) env() map[string]string {
	return map[string]string{"TTS_ENGINE": "openai", "OPENAI_TTS_BASE_URL": k.URL + "/v1", "OPENAI_TTS_MODEL": "kokoro",
		"OPENAI_API_KEY": "sk-meant-for-openai", "OPENAI_TTS_API_KEY": "none"}
}

const (
	englishParagraph = "The weather is lovely today, and we are going for a long walk by the river.\n"
	spanishParagraph = "Mañana vamos a visitar a nuestros abuelos en el pueblo, porque hace mucho que no los vemos.\n"
)

// TestKokoroSpeaksEachParagraphInItsLanguage: with Kokoro behind OPENAI_TTS_BASE_URL, an
// order of an English and a Spanish paragraph is one file, the English paragraph read by
// nova's English Kokoro voice and the Spanish one by its Spanish voice; the six voices'
// Spanish previews use at least three distinct Spanish voices, and a voice sample for a
// Spanish visitor is spoken by the Spanish voice.
func TestKokoroSpeaksEachParagraphInItsLanguage(t *testing.T) {
	requireMediaTools(t)
	k := startKokoro(t)
	h := startApp(t, k.env())
	sessionID, url := h.checkout(ttsOrder(englishParagraph+spanishParagraph, "nova", "mp3", 1, "o@example.com", "en"))
	h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
	link := h.waitForLink(sessionID, 30*time.Second)
	if codec, secs := probe(t, h.get(link).body); codec != "mp3" || secs < 1.8 {
		t.Errorf("result %s %.1fs, want one mp3 of both calls", codec, secs)
	}
	voices, inputs := k.received()
	if !slices.Equal(voices, []string{"af_nova", "ef_dora"}) || strings.TrimSpace(inputs[0]) != strings.TrimSpace(englishParagraph) {
		t.Errorf("calls: voices %v, inputs %q", voices, inputs)
	}

	spanish := map[string]bool{}
	for _, voice := range providers.Voices {
		body := map[string]any{"text": spanishParagraph, "voice": voice, "speed": 1, "format": "mp3", "language": "es", "locale": "es"}
		h.wantStatus(h.postJSON("/api/tts/preview", body), 200)
		v, _ := k.received()
		spanish[v[len(v)-1]] = true
	}
	if len(spanish) < 3 || !strings.HasPrefix(strings.Join(slices.Sorted(mapKeys(spanish)), ""), "e") {
		t.Errorf("Spanish previews spoken by %v, want at least three Spanish voices", spanish)
	}
	h.wantStatus(h.get("/api/tts/samples/echo?locale=es"), 200)
	if v, _ := k.received(); v[len(v)-1] != "em_alex" {
		t.Errorf("echo's Spanish sample spoken by %s", v[len(v)-1])
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestKokoroRefusalIsRefundedAndLogged: a server that refuses the order (Kokoro-FastAPI's
// 400 invalid_model, "Voice … not found") is asked once: the order is refunded at once with
// the reason engine_refused, never delivered, and the operator's log says what the server
// said. A server that fails (500) is asked FULFIL_MAX_ATTEMPTS times before the refund.
func TestKokoroRefusalIsRefundedAndLogged(t *testing.T) {
	requireMediaTools(t)
	for _, tt := range []struct {
		name, key, value, want, reason string
		failFirst, calls               int
	}{
		{"unknown model", "OPENAI_TTS_MODEL", "kokoro-v9", "invalid_model: Unsupported model: kokoro-v9", "engine_refused", 0, 1},
		{"unknown voice", "OPENAI_TTS_VOICES", "en:nova=af_nobody", "validation_error: Voice 'af_nobody' not found", "engine_refused", 0, 1},
		{"a 500 each time", "OPENAI_TTS_MODEL", "kokoro", "processing_error: CUDA out of memory", "production_failed", 1000, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := startKokoro(t)
			k.failFirst = tt.failFirst
			env := k.env()
			env[tt.key] = tt.value
			env["FULFIL_MAX_ATTEMPTS"] = "3"
			log := &testkit.LogBuffer{}
			h := startAppLogging(t, env, slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn})))
			sessionID, url := h.checkout(ttsOrder(englishParagraph, "nova", "mp3", 1, "o@example.com", "en"))
			h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
			if body := waitRefunded(t, h, sessionID); !strings.Contains(body, `"`+tt.reason+`"`) {
				t.Errorf("refunded without the reason %s: %s", tt.reason, body)
			}
			if voices, _ := k.received(); len(voices) != tt.calls {
				t.Errorf("the server was asked %d times, want %d", len(voices), tt.calls)
			}
			if !strings.Contains(log.String(), tt.want) {
				t.Errorf("the log does not say %q:\n%s", tt.want, log.String())
			}
		})
	}
}

// TestKokoroRetriesChargeOnce: a call that fails (500) or hangs past JOB_TIMEOUT or
// OPENAI_TTS_CALL_TIMEOUT is retried; the order is delivered once and the payment is not refunded.
func TestKokoroRetriesChargeOnce(t *testing.T) {
	requireMediaTools(t)
	for _, tt := range []struct {
		name  string
		setup func(*kokoroStandIn)
		env   map[string]string
	}{
		{"a 500", func(k *kokoroStandIn) { k.failFirst = 1 }, nil},
		{"a hung call, the job's timeout", func(k *kokoroStandIn) { k.hangFirst = true }, map[string]string{"JOB_TIMEOUT": "5s"}},
		{"a hung call, the call's timeout", func(k *kokoroStandIn) { k.hangFirst = true }, map[string]string{"OPENAI_TTS_CALL_TIMEOUT": "3s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := startKokoro(t)
			tt.setup(k)
			env := k.env()
			for key, v := range tt.env {
				env[key] = v
			}
			h := startApp(t, env)
			sessionID, url := h.checkout(ttsOrder(englishParagraph, "nova", "mp3", 1, "o@example.com", "en"))
			h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
			h.waitForLink(sessionID, 30*time.Second)
			// A retry that itself runs past the timeout on a loaded machine is tried again:
			// at least the failed call and one retry, one delivery, no refund.
			if voices, _ := k.received(); len(voices) < 2 {
				t.Errorf("%d calls, want the failed one and a retry", len(voices))
			}
			lookup := h.get("/payment/tts/checkout-session?sessionId=" + sessionID).json(t)
			if refunded, err := h.app.test.RefundedIntent(context.Background(), lookup["payment_intent"].(string)); err != nil || refunded {
				t.Errorf("a delivered order was refunded: %v %v", refunded, err)
			}
		})
	}
}

// waitRefunded waits for a text-to-speech order to be refunded, checks the test checkout
// recorded the refund, and returns the order's refunded answer.
func waitRefunded(t *testing.T, h *harness, sessionID string) string {
	t.Helper()
	return waitRefundedOf(t, h, "tts", sessionID)
}

// waitRefundedOf is waitRefunded for an order of service.
func waitRefundedOf(t *testing.T, h *harness, service, sessionID string) string {
	t.Helper()
	var r reply
	if !testkit.WaitFor(30*time.Second, func() bool {
		r = h.postJSON("/services/"+service, map[string]string{"sessionId": sessionID})
		if r.status == 200 {
			t.Fatalf("delivered: %s", r.body)
		}
		return r.status == 410 && bytes.Contains(r.body, []byte(`"status":"refunded"`))
	}) {
		t.Fatalf("not refunded: %d %s", r.status, r.body)
	}
	lookup := h.get("/payment/" + service + "/checkout-session?sessionId=" + sessionID).json(t)
	if ok, err := h.app.test.RefundedIntent(context.Background(), lookup["payment_intent"].(string)); err != nil || !ok {
		t.Errorf("no refund recorded at the checkout: %v %v", ok, err)
	}
	return string(r.body)
}

// TestTranscriptionRefusalIsRefundedAtOnce: a transcription server that refuses the call
// (its 404 to a key it does not know) gets the audio-to-text order refunded at once, with
// the reason engine_refused, not production_failed after FULFIL_MAX_ATTEMPTS tries.
func TestTranscriptionRefusalIsRefundedAtOnce(t *testing.T) {
	requireMediaTools(t)
	stt := startFakeOpenAI(t)
	env := stt.env()
	env["OPENAI_STT_API_KEY"] = "sk-not-this-servers"
	env["FULFIL_MAX_ATTEMPTS"] = "3"
	h := startApp(t, env)
	co := sampleSTTCheckout(t, h)
	h.wantStatus(h.do("POST", co["url"].(string)+"/pay", "", nil, nil), 303)
	if body := waitRefundedOf(t, h, "sst", co["sessionId"].(string)); !strings.Contains(body, `"engine_refused"`) {
		t.Errorf("refunded without the reason engine_refused: %s", body)
	}
}

// TestAudioToTextGoesToItsOwnServer: with OPENAI_STT_BASE_URL set, an audio-to-text order
// goes to that server with its key, while speech goes to Kokoro without one; the shared
// OPENAI_BASE_URL (a server that does not answer here) is used by neither.
func TestAudioToTextGoesToItsOwnServer(t *testing.T) {
	requireMediaTools(t)
	stt, k := startFakeOpenAI(t), startKokoro(t)
	env := k.env()
	env["STT_ENGINE"] = "openai"
	env["OPENAI_STT_BASE_URL"] = stt.URL + "/v1"
	env["OPENAI_STT_API_KEY"] = "sk-local" // what the stand-in asks for
	env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
	h := startApp(t, env)
	co := sampleSTTCheckout(t, h)
	h.wantStatus(h.do("POST", co["url"].(string)+"/pay", "", nil, nil), 303)
	dl := h.get(h.waitForLinkOf("sst", co["sessionId"].(string), 30*time.Second))
	if !bytes.Contains(dl.body, []byte("Hello from Parla.")) {
		t.Errorf("transcript %q", dl.body)
	}
	stt.mu.Lock()
	if len(stt.requests) != 1 || stt.requests[0].Endpoint != "transcriptions" {
		t.Errorf("transcription server got %+v", stt.requests)
	}
	stt.mu.Unlock()
	sessionID, url := h.checkout(ttsOrder(englishParagraph, "onyx", "mp3", 1, "o@example.com", "en"))
	h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
	h.waitForLink(sessionID, 30*time.Second)
	if voices, _ := k.received(); !slices.Equal(voices, []string{"am_onyx"}) {
		t.Errorf("speech calls %v", voices)
	}
}

// sampleSTTCheckout uploads the sample sentence and opens its audio-to-text checkout (text,
// in English), returning the checkout's answer.
func sampleSTTCheckout(t *testing.T, h *harness) map[string]any {
	t.Helper()
	data, _ := os.ReadFile(testkit.Speech(t, t.TempDir(), "talk.mp3", testkit.SampleSentence))
	up := h.upload("talk.mp3", data).json(t)
	order := map[string]any{"filePath": up["file"].(map[string]any)["path"], "fileName": "talk.mp3", "response_format": "text",
		"email": "listener@example.com", "emailVerify": "listener@example.com", "locale": "en", "language": "en"}
	r := h.postJSON("/payment/sst/create-checkout-session", map[string]any{"order": order})
	h.wantStatus(r, 200)
	return r.json(t)
}

// startTwoEngines starts the app with TTS_ENGINE=openai,espeak, Kokoro's stand-in behind
// OPENAI_TTS_BASE_URL.
func startTwoEngines(t *testing.T) (*harness, *kokoroStandIn) {
	requireMediaTools(t)
	k := startKokoro(t)
	env := k.env()
	env["TTS_ENGINE"] = "openai,espeak"
	return startApp(t, env), k
}

// TestEnginesByLanguage is issue 31's "done when": with TTS_ENGINE=openai,espeak and Kokoro
// behind OPENAI_TTS_BASE_URL, a text of an English, a Spanish and a Turkish paragraph is one
// file: English and Spanish by their Kokoro voices, Turkish (which Kokoro does not speak) by
// espeak-ng.
func TestEnginesByLanguage(t *testing.T) {
	h, k := startTwoEngines(t)
	turkish := "Bugün hava çok güzel, öğleden sonra parkta uzun bir yürüyüş yapacağız.\n"
	sessionID, url := h.checkout(ttsOrder(englishParagraph+spanishParagraph+turkish, "nova", "mp3", 1, "o@example.com", "en"))
	h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
	link := h.waitForLink(sessionID, 60*time.Second)
	// Kokoro's stand-in speaks a second a call; espeak-ng reads the Turkish in about four.
	if codec, secs := probe(t, h.get(link).body); codec != "mp3" || secs < 4 {
		t.Errorf("result %s %.1fs, want one mp3 of Kokoro's two parts and espeak-ng's", codec, secs)
	}
	voices, inputs := k.received()
	if !slices.Equal(voices, []string{"af_nova", "ef_dora"}) || strings.Contains(strings.Join(inputs, ""), "Bugün") {
		t.Errorf("Kokoro got voices %v, inputs %q", voices, inputs)
	}
}

// TestEnginesShownByLanguage is issue 31's interface: with TTS_ENGINE=openai,espeak and
// Kokoro behind OPENAI_TTS_BASE_URL, /api/config says which engine reads which language,
// the quote says which reads each of the text's languages at one price, and the preview
// says which spoke it; with one engine none of them says anything new.
func TestEnginesShownByLanguage(t *testing.T) {
	h, _ := startTwoEngines(t)
	var cfg struct {
		TTS struct{ Engines []orders.Reader } `json:"tts"`
	}
	json.Unmarshal(h.get("/api/config").body, &cfg)
	byEngine := map[string][]string{}
	for _, r := range cfg.TTS.Engines {
		byEngine[r.Engine] = r.Languages
	}
	if k, e := byEngine["Kokoro"], byEngine["eSpeak NG"]; len(byEngine) != 2 || fmt.Sprint(k) != "[en es fr hi it ja pt zh]" ||
		!slices.Contains(e, "tr") || slices.Contains(e, "en") {
		t.Errorf("config's tts.engines = %+v", cfg.TTS.Engines)
	}
	turkish := "Bugün hava çok güzel, öğleden sonra parkta uzun bir yürüyüş yapacağız.\n"
	var q struct {
		Amount  int64
		Engines []orders.Reader
	}
	json.Unmarshal(h.postJSON("/api/tts/quote", map[string]string{"text": englishParagraph + spanishParagraph + turkish, "locale": "en"}).body, &q)
	if got := fmt.Sprint(q.Engines); got != "[{Kokoro [en es]} {eSpeak NG [tr]}]" {
		t.Errorf("quote's engines %s", got)
	}
	// The price is the same whatever engine reads: a Turkish and an English text of one length.
	english := strings.Repeat(englishParagraph, 20) // 1,520 characters: two started thousands
	long := []rune(strings.Repeat(turkish, 25))[:len(english)]
	trQuote := h.postJSON("/api/tts/quote", map[string]string{"text": string(long), "locale": "en"}).json(t)
	enQuote := h.postJSON("/api/tts/quote", map[string]string{"text": english, "locale": "en"}).json(t)
	if trQuote["amount"] != enQuote["amount"] || enQuote["amount"] != 198.0 || fmt.Sprint(trQuote["engines"]) == fmt.Sprint(enQuote["engines"]) {
		t.Errorf("Turkish %v, English %v: want two engines at one price", trQuote, enQuote)
	}
	for text, want := range map[string]string{turkish: "eSpeak NG", englishParagraph: "Kokoro", englishParagraph + turkish: "Kokoro, eSpeak NG"} {
		r := h.postJSON("/api/tts/preview", map[string]any{"text": text, "voice": "nova", "format": "mp3", "speed": 1, "locale": "en"})
		if got := r.header.Get("X-Preview-Engines"); r.status != 200 || got != want {
			t.Errorf("preview of %q: %d, spoken by %q, want %q", text, r.status, got, want)
		}
	}

	one := startApp(t, map[string]string{"TTS_ENGINE": "espeak"})
	conf := one.get("/api/config").json(t)["tts"].(map[string]any)
	quote := one.postJSON("/api/tts/quote", map[string]string{"text": englishParagraph + turkish, "locale": "en"}).json(t)
	pv := one.postJSON("/api/tts/preview", map[string]any{"text": turkish, "voice": "nova", "format": "mp3", "speed": 1, "locale": "en"})
	if conf["engines"] != nil || quote["engines"] != nil || pv.header.Get("X-Preview-Engines") != "" {
		t.Errorf("one engine: config %v, quote %v, preview %v", conf["engines"], quote["engines"], pv.header)
	}
}
