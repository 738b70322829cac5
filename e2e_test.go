package main

// The harness of the end-to-end tests: the in-process app they drive over HTTP, as a
// browser or a payment provider would, and the checks they share. The journeys themselves
// are in e2e_<area>_test.go, one file per service or area.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers/testkit"
)

// harness runs the real app, as main does, on a loopback port.
type harness struct {
	t    testing.TB
	base string
	cfg  Config
	app  *App
	stop func() // shuts the app down as SIGTERM does; safe to call twice
}

// startApp boots the product on embedded defaults plus env.
func startApp(t testing.TB, env map[string]string) *harness {
	t.Helper()
	return startAppLogging(t, env, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// startAppLogging is startApp with the app's log going to log.
func startAppLogging(t testing.TB, env map[string]string, log *slog.Logger) *harness {
	t.Helper()
	return startAppTuned(t, env, log, nil)
}

// startAppTuned is startAppLogging with tune (if not nil) given the loaded configuration
// before the app is built, to set what no environment variable sets (checkpoint).
func startAppTuned(t testing.TB, env map[string]string, log *slog.Logger, tune func(*Config)) *harness {
	t.Helper()
	addr := testkit.FreePort(t)
	all := map[string]string{"ADDR": addr, "DATA_DIR": t.TempDir(), "PUBLIC_URL": "http://" + addr,
		"RATE_LIMIT": "0", "FULFIL_RETRY_BASE": "100ms", "LOG_LEVEL": "warn"}
	for k, v := range env {
		all[k] = v
	}
	cfg, err := loadConfig(envOf(all))
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	app, err := build(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	h := &harness{t: t, base: "http://" + addr, cfg: cfg, app: app, stop: stop}
	h.wantStatus(h.get("/healthz"), 200)
	return h
}

// noRedirect's timeout is a backstop against a hung server, not a speed bound: what these
// tests prove is the answers. A visitor's upload is measured at nice 19 (media/visitors.go):
// beside four nice-0 busy loops (make test-loaded) TestUploadMeasuresAndPricesEveryFormat
// took 159 s, 5 s without them.
var noRedirect = &http.Client{
	Timeout:       5 * time.Minute,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer is not JSON (%d): %s", r.status, r.body)
	}
	return m
}

func (h *harness) do(method, path, ctype string, body []byte, header map[string]string) reply {
	h.t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = h.base + path
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	r := reply{resp.StatusCode, resp.Header, b}
	recordErrorCode(r)
	return r
}

func (h *harness) get(path string) reply { return h.do("GET", path, "", nil, nil) }

func (h *harness) postJSON(path string, v any) reply {
	b, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.do("POST", path, "application/json", b, nil)
}

func (h *harness) wantStatus(r reply, status int) {
	h.t.Helper()
	if r.status != status {
		h.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
}

func ttsOrder(text, voice, format string, speed float64, email, locale string) map[string]any {
	return map[string]any{"order": map[string]any{"voice": voice, "input": text, "format": format,
		"speed": speed, "email": email, "emailVerify": email, "locale": locale}}
}

// checkout creates a TTS checkout and returns its session id and URL.
func (h *harness) checkout(order map[string]any) (string, string) {
	h.t.Helper()
	r := h.postJSON("/payment/tts/create-checkout-session", order)
	h.wantStatus(r, 200)
	m := r.json(h.t)
	if m["ok"] != true || m["currency"] != "eur" {
		h.t.Fatalf("checkout answer %s", r.body)
	}
	return m["sessionId"].(string), m["url"].(string)
}

// waitForLink polls the text-to-speech result endpoint as the confirmation page does.
func (h *harness) waitForLink(sessionID string, within time.Duration) string {
	h.t.Helper()
	return h.waitForLinkOf("tts", sessionID, within)
}

// waitForLinkOf polls a service's result endpoint as the confirmation page does.
func (h *harness) waitForLinkOf(service, sessionID string, within time.Duration) string {
	h.t.Helper()
	var r reply
	if !testkit.WaitFor(within, func() bool {
		r = h.postJSON("/services/"+service, map[string]string{"sessionId": sessionID})
		if r.status != 200 && r.status != 202 {
			h.t.Fatalf("result: %d %s", r.status, r.body)
		}
		return r.status == 200
	}) {
		h.t.Fatalf("no link within %v: %s", within, r.body)
	}
	return r.json(h.t)["data"].(map[string]any)["data"].(string)
}

// probe reads codec and duration of an audio file with ffprobe.
func probe(t testing.TB, data []byte) (codec string, seconds float64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "result")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testkit.Binary(t, "ffprobe"), "-v", "error", "-select_streams", "a:0",
		"-show_entries", "stream=codec_name:format=duration", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	var p struct {
		Streams []struct {
			Codec string `json:"codec_name"`
		} `json:"streams"`
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &p); err != nil || len(p.Streams) == 0 {
		t.Fatalf("ffprobe output %s: %v", out, err)
	}
	fmt.Sscan(p.Format.Duration, &seconds)
	return p.Streams[0].Codec, seconds
}

func requireMediaTools(t testing.TB) {
	for _, b := range []string{"espeak-ng", "kakasi", "ffmpeg", "ffprobe"} {
		testkit.Binary(t, b)
	}
}
