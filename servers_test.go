package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/api/health"
	"parla/api/orders"
	"parla/providers/testkit"
)

// modelsServer is a stand-in for an OpenAI-compatible server as /readyz sees it: GET
// /v1/models answered, the Authorization headers it got kept.
type modelsServer struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newModelsServer(t testing.TB) *modelsServer {
	m := &modelsServer{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.auths = append(m.auths, r.Header.Get("Authorization"))
		m.mu.Unlock()
		if r.URL.Path != "/v1/models" {
			http.Error(w, `{"detail":"Not Found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"kokoro","object":"model"}]}`))
	}))
	t.Cleanup(m.Close)
	return m
}

// TestSpeechServerPerServiceAndDown: speech on its own server, which needs no key (no
// Authorization header goes to it) while transcripts keep theirs; /readyz asks each
// server; a server that stops answering closes text-to-speech with the reason for the
// operator, and checkout refuses it.
func TestSpeechServerPerServiceAndDown(t *testing.T) {
	tts, stt := newModelsServer(t), newModelsServer(t)
	h := startApp(t, map[string]string{"TTS_ENGINE": "openai", "OPENAI_TTS_BASE_URL": tts.URL + "/v1",
		"STT_ENGINE": "openai", "OPENAI_STT_BASE_URL": stt.URL + "/v1", "OPENAI_API_KEY": "sk-stt",
		"OPENAI_TTS_API_KEY": "none", "ADMIN_TOKEN": testAdminToken})
	admin := map[string]string{"Authorization": "Bearer " + testAdminToken}
	r := h.do("GET", "/readyz", "", nil, admin)
	h.wantStatus(r, 200)
	for _, want := range []string{`"server.tts":{"status":"ok","detail":"` + tts.URL + `/v1"}`,
		`"server.sst+vtt":{"status":"ok","detail":"` + stt.URL + `/v1"}`} {
		if !bytes.Contains(r.body, []byte(want)) {
			t.Errorf("/readyz lacks %s: %s", want, r.body)
		}
	}
	tts.mu.Lock()
	if len(tts.auths) == 0 || strings.Join(tts.auths, "") != "" {
		t.Errorf("speech server got Authorization %q, want none", tts.auths)
	}
	tts.mu.Unlock()
	stt.mu.Lock()
	if len(stt.auths) == 0 || stt.auths[0] != "Bearer sk-stt" {
		t.Errorf("transcription server got Authorization %q", stt.auths)
	}
	stt.mu.Unlock()

	tts.Close()
	testkit.Eventually(t, 5*readyMaxAge, func() bool { return h.get("/readyz").status == 503 }, "/readyz to see the speech server down")
	r = h.do("GET", "/readyz", "", nil, admin)
	if !bytes.Contains(r.body, []byte(`"server.tts":{"status":"failed","error":"server `+tts.URL+`/v1 does not answer`)) {
		t.Errorf("/readyz with the speech server down: %s", r.body)
	}
	testkit.Eventually(t, 5*readyMaxAge, func() bool { return h.app.book.Desk.Available(orders.TTS) != nil }, "text-to-speech to close")
	if err := h.app.book.Desk.Available(orders.STT); err != nil {
		t.Errorf("transcription closed with the speech server: %v", err)
	}
	r = h.postJSON("/payment/tts/create-checkout-session", ttsOrder("Hello.", "alloy", "mp3", 1, "o@example.com", "en"))
	if r.status != 503 || !bytes.Contains(r.body, []byte("service_unavailable")) {
		t.Errorf("checkout with the speech server down: %d %s", r.status, r.body)
	}
}

// TestSpeechServerDownAtBoot: the start's block closes text-to-speech, says which server
// does not answer and what opens it; the other services are served.
func TestSpeechServerDownAtBoot(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	start := time.Now()
	h := startApp(t, map[string]string{"TTS_ENGINE": "openai", "OPENAI_TTS_BASE_URL": gone})
	if d := time.Since(start); d > 2*health.BootServerTimeout {
		t.Errorf("start took %v", d)
	}
	block := health.ClosedBlock(h.app.closed())
	for _, want := range []string{"CLOSED  text-to-speech (/tts)", "server " + gone + " does not answer",
		"open    start that server"} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
}

// TestSpareSpeechServer: with TTS_ENGINE=openai,espeak a speech server down leaves the node
// ready (/readyz reports it closed) and text-to-speech open: espeak-ng takes its languages.
func TestSpareSpeechServer(t *testing.T) {
	requireMediaTools(t)
	tts := newModelsServer(t)
	h := startApp(t, map[string]string{"TTS_ENGINE": "openai,espeak", "OPENAI_TTS_BASE_URL": tts.URL + "/v1"})
	h.wantStatus(h.get("/readyz"), 200)
	tts.Close()
	testkit.Eventually(t, 5*readyMaxAge, func() bool {
		return bytes.Contains(h.get("/readyz").body, []byte(`"server.tts":{"status":"closed"`))
	}, "/readyz to report the speech server closed")
	h.wantStatus(h.get("/readyz"), 200)
	if err := h.app.book.Desk.Available(orders.TTS); err != nil {
		t.Errorf("text-to-speech closed with espeak-ng open: %v", err)
	}
}
