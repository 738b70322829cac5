package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers/stripe"
	"parla/providers/testkit"
	"parla/webui"
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

var noRedirect = &http.Client{
	Timeout:       30 * time.Second,
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

func TestEndToEndOnEmbeddedDefaults(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, nil)

	cfg := h.get("/api/config").json(t)
	if cfg["payment"].(map[string]any)["mode"] != "test" || cfg["services"].(map[string]any)["tts"].(map[string]any)["open"] != true {
		t.Fatalf("config: %v", cfg)
	}
	text := "Привет! Это проверка. Hello from Parla, the pay-per-use speech site."
	sessionID, url := h.checkout(ttsOrder(text, "echo", "opus", 1.25, "visitor@example.com", "ru"))

	h.wantStatus(h.postJSON("/services/tts", map[string]string{"sessionId": sessionID}), 402)
	page := h.get(url)
	h.wantStatus(page, 200)
	if !bytes.Contains(page.body, []byte("0.99")) || !bytes.Contains(bytes.ToUpper(page.body), []byte("TEST")) {
		t.Errorf("test checkout page lacks the amount or the test marking:\n%s", page.body)
	}
	paidAt := time.Now()
	pay := h.do("POST", url+"/pay", "", nil, nil)
	h.wantStatus(pay, 303)
	if want := h.cfg.PublicURL + "/payment/success?session_id=" + sessionID; pay.header.Get("Location") != want {
		t.Errorf("pay redirects to %q, want %q", pay.header.Get("Location"), want)
	}
	lookup := h.get("/payment/tts/checkout-session?sessionId=" + sessionID).json(t)
	if lookup["ok"] != true || lookup["payment_status"] != "paid" || lookup["payment_intent"] == "" {
		t.Errorf("lookup after payment: %v", lookup)
	}
	link := h.waitForLink(sessionID, 20*time.Second)
	t.Logf("link ready %v after payment", time.Since(paidAt).Round(time.Millisecond))

	dl := h.get(link)
	h.wantStatus(dl, 200)
	if cd := dl.header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="parla-speech-`) || !strings.HasSuffix(cd, `.opus"`) {
		t.Errorf("Content-Disposition = %q", cd)
	}
	codec, secs := probe(t, dl.body)
	if codec != "opus" || secs < 2 || secs > 20 {
		t.Errorf("result is %s of %.1fs, want opus speech of a few seconds", codec, secs)
	}

	mails, _ := filepath.Glob(filepath.Join(h.cfg.DataDir, "outbox", "*.eml"))
	if len(mails) != 1 {
		t.Fatalf("%d messages in the outbox, want 1", len(mails))
	}
	msg, _ := os.ReadFile(mails[0])
	// The letter gives the link page, never the file itself (a mail scanner opens links).
	if !bytes.Contains(msg, []byte(pageLink(link))) || bytes.Contains(msg, []byte(link)) || !bytes.Contains(msg, []byte("visitor@example.com")) {
		t.Errorf("outbox message lacks the page link or the address, or gives the download:\n%s", msg)
	}
	// Russian subject, RFC 2047-encoded
	if !bytes.Contains(msg, []byte("=?UTF-8?q?Parla:_=D1=80=D0=B5")) {
		t.Errorf("subject is not the localized (encoded) one:\n%s", msg[:min(len(msg), 400)])
	}

	// An interrupted download resumes: one byte range at a time, 416 past the end.
	full := h.get(link).body
	head := h.do("GET", link, "", nil, map[string]string{"Range": "bytes=0-99"})
	rest := h.do("GET", link, "", nil, map[string]string{"Range": "bytes=100-"})
	if head.status != 206 || rest.status != 206 || !bytes.Equal(append(head.body, rest.body...), full) ||
		head.header.Get("Content-Range") != fmt.Sprintf("bytes 0-99/%d", len(full)) {
		t.Errorf("ranges: %d %q + %d, %d+%d bytes of %d", head.status, head.header.Get("Content-Range"),
			rest.status, len(head.body), len(rest.body), len(full))
	}
	h.wantStatus(h.do("GET", link, "", nil, map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(full))}), 416)

	h.wantStatus(h.get("/payment/sst/checkout-session?sessionId="+sessionID), 404)
	done := h.postJSON("/services/tts", map[string]string{"sessionId": sessionID}).json(t)
	if done["order"].(map[string]any)["status"] != "done" {
		t.Errorf("order after delivery: %v", done)
	}
}

func TestEndToEndWithMinIOAndSMTP(t *testing.T) {
	requireMediaTools(t)
	minio := testkit.StartMinIO(t)
	smtp := testkit.StartSMTP(t)
	h := startApp(t, map[string]string{
		"STORAGE": "minio", "MINIO_ENDPOINT": minio.Endpoint, "MINIO_ACCESS_KEY": minio.AccessKey,
		"MINIO_SECRET_KEY": minio.SecretKey, "MINIO_BUCKET": "parla-e2e", "SMTP_URL": smtp.URL(),
	})
	sessionID, url := h.checkout(ttsOrder("Stored in MinIO and sent by SMTP.", "shimmer", "flac", 0.8, "buyer@example.org", "jp"))
	h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
	link := h.waitForLink(sessionID, 20*time.Second)

	redirect := h.get(link)
	h.wantStatus(redirect, 302)
	loc := redirect.header.Get("Location")
	if !strings.Contains(loc, minio.Endpoint) || !strings.Contains(loc, "X-Amz-Signature") {
		t.Fatalf("download redirects to %q, want a presigned MinIO URL", loc)
	}
	file := h.get(loc)
	h.wantStatus(file, 200)
	if cd := file.header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") || !strings.Contains(cd, ".flac") {
		t.Errorf("MinIO Content-Disposition = %q", cd)
	}
	if codec, secs := probe(t, file.body); codec != "flac" || secs < 1 {
		t.Errorf("result is %s of %.1fs", codec, secs)
	}
	got := smtp.WaitForMessages(t, 1, 10*time.Second)
	if len(got) != 1 || got[0].To[0] != "buyer@example.org" || !bytes.Contains(got[0].Data, []byte(pageLink(link))) {
		t.Fatalf("SMTP received %d messages; first: %+v", len(got), got)
	}
	if !bytes.Contains(got[0].Data, []byte("=?UTF-8?")) {
		t.Errorf("Japanese subject not encoded:\n%s", got[0].Data[:400])
	}
}

func TestBadInputGetsClearErrorsAndChargesNothing(t *testing.T) {
	h := startApp(t, map[string]string{"TTS_MAX_CHARS": "50"})
	ok := func() map[string]any { return ttsOrder("Hello there.", "alloy", "mp3", 1, "a@example.com", "en") }
	edit := func(f func(o map[string]any)) map[string]any {
		m := ok()
		f(m["order"].(map[string]any))
		return m
	}
	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"unknown voice", edit(func(o map[string]any) { o["voice"] = "bob" }), 400, "invalid_voice"},
		{"unknown format", edit(func(o map[string]any) { o["format"] = "wav" }), 400, "invalid_format"},
		{"too slow", edit(func(o map[string]any) { o["speed"] = 0.2 }), 400, "invalid_speed"},
		{"too fast", edit(func(o map[string]any) { o["speed"] = 4.5 }), 400, "invalid_speed"},
		{"speed not a number", edit(func(o map[string]any) { o["speed"] = "fast" }), 400, "invalid_json"},
		{"empty text", edit(func(o map[string]any) { o["input"] = "" }), 400, "empty_text"},
		{"oversized text", edit(func(o map[string]any) { o["input"] = strings.Repeat("a", 51) }), 400, "text_too_long"},
		{"malformed e-mail", edit(func(o map[string]any) { o["email"], o["emailVerify"] = "nope", "nope" }), 400, "invalid_email"},
		{"CR/LF in e-mail", edit(func(o map[string]any) {
			o["email"], o["emailVerify"] = "a@example.com\r\nBcc: b@example.com", "a@example.com\r\nBcc: b@example.com"
		}), 400, "invalid_email"},
		{"mismatched e-mails", edit(func(o map[string]any) { o["emailVerify"] = "b@example.com" }), 400, "email_mismatch"},
		{"unknown locale", edit(func(o map[string]any) { o["locale"] = "xx" }), 400, "invalid_locale"},
		{"stale price", func() map[string]any {
			m := ok()
			m["products"] = []any{map[string]any{"price_data": map[string]any{"currency": "eur", "unit_amount": 1}, "quantity": 1}}
			return m
		}(), 409, "price_mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.postJSON("/payment/tts/create-checkout-session", tt.body)
			e := r.json(t)
			if r.status != tt.status || e["ok"] != false || e["error"].(map[string]any)["code"] != tt.code {
				t.Errorf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	raw := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"not JSON", "POST", "/payment/tts/create-checkout-session", "{voice:", 400, "invalid_json"},
		{"unknown session lookup", "GET", "/payment/tts/checkout-session?sessionId=cs_test_nope", "", 404, "session_not_found"},
		{"missing session lookup", "GET", "/payment/tts/checkout-session", "", 400, "missing_session"},
		{"unknown session result", "POST", "/services/tts", `{"sessionId":"cs_test_nope"}`, 404, "session_not_found"},
		{"missing session result", "POST", "/services/tts", `{}`, 400, "missing_session"},
		{"unknown service", "POST", "/services/xyz", `{"sessionId":"x"}`, 404, "not_found"},
		{"unknown download", "GET", "/d/nope", "", 404, "not_found"},
		{"unknown API path", "GET", "/api/nope", "", 404, "not_found"},
		{"webhook without Stripe", "POST", "/webhooks/stripe", `{}`, 404, "not_found"},
		{"unknown test checkout", "GET", "/checkout/test/cs_test_nope", "", 404, "session_not_found"},
	}
	for _, tt := range raw {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(tt.method, tt.path, "application/json", []byte(tt.body), nil)
			e := r.json(t)
			if r.status != tt.status || e["error"].(map[string]any)["code"] != tt.code {
				t.Errorf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	var orders, sessions int
	h.app.db.QueryRow(`SELECT COUNT(*) FROM orders`).Scan(&orders)
	h.app.db.QueryRow(`SELECT COUNT(*) FROM test_checkout_sessions`).Scan(&sessions)
	if orders != 0 || sessions != 0 {
		t.Errorf("refused requests left %d orders and %d checkout sessions", orders, sessions)
	}

	// An unpaid order produces nothing and is refused with 402.
	sessionID, _ := h.checkout(ok())
	r := h.postJSON("/services/tts", map[string]string{"sessionId": sessionID})
	if r.status != 402 || r.json(t)["error"].(map[string]any)["code"] != "payment_required" {
		t.Errorf("unpaid result: %d %s", r.status, r.body)
	}
	files, _ := filepath.Glob(filepath.Join(h.cfg.DataDir, "files", "results", "*"))
	if len(files) != 0 {
		t.Errorf("files produced for an unpaid order: %v", files)
	}
}

func TestStripeWebhooks(t *testing.T) {
	requireMediaTools(t)
	mock := testkit.StartStripeMock(t)
	const secret = "whsec_parla_test_secret"
	h := startApp(t, map[string]string{"STRIPE_SECRET_KEY": "sk_test_parla", "STRIPE_WEBHOOK_SECRET": secret,
		"STRIPE_PUBLISHABLE_KEY": "pk_test_parla", "STRIPE_API_BASE": mock})
	cfg := h.get("/api/config").json(t)
	if p := cfg["payment"].(map[string]any); p["mode"] != "stripe" || p["publishableKey"] != "pk_test_parla" {
		t.Fatalf("payment config: %v", p)
	}
	sessionID, url := h.checkout(ttsOrder("Paid through Stripe.", "onyx", "mp3", 1, "s@example.com", "es"))
	if !strings.HasPrefix(sessionID, "cs_") || !strings.HasPrefix(url, "https://") {
		t.Fatalf("stripe session %q url %q", sessionID, url)
	}
	h.wantStatus(h.get("/checkout/test/"+sessionID), 404) // no test checkout with real payments

	event := func(id, typ, paymentStatus string) []byte {
		return []byte(fmt.Sprintf(`{"id":%q,"object":"event","type":%q,"created":%d,"api_version":"2023-10-16",
			"data":{"object":{"id":%q,"object":"checkout.session","payment_status":%q,"status":"complete",
			"payment_intent":"pi_parla_1","amount_total":99,"currency":"eur","client_reference_id":"",
			"customer_details":{"email":"s@example.com","name":"S"},"metadata":{}}}}`,
			id, typ, time.Now().Unix(), sessionID, paymentStatus))
	}
	send := func(body []byte, sig string) reply {
		hdr := map[string]string{}
		if sig != "" {
			hdr["Stripe-Signature"] = sig
		}
		return h.do("POST", "/webhooks/stripe", "application/json", body, hdr)
	}
	expired := event("evt_expired_first", "checkout.session.expired", "unpaid")
	completed := event("evt_completed", "checkout.session.completed", "paid")

	tests := []struct {
		name   string
		body   []byte
		sig    string
		status int
		code   string
	}{
		{"unsigned", completed, "", 400, "invalid_signature"},
		{"wrong secret", completed, stripe.SignPayload(completed, "whsec_other", time.Now()), 400, "invalid_signature"},
		{"tampered", bytes.Replace(completed, []byte(`"amount_total":99`), []byte(`"amount_total":1`), 1),
			stripe.SignPayload(completed, secret, time.Now()), 400, "invalid_signature"},
		{"stale", completed, stripe.SignPayload(completed, secret, time.Now().Add(-time.Hour)), 400, "invalid_signature"},
		{"signed but not an event", []byte("{not json"), stripe.SignPayload([]byte("{not json"), secret, time.Now()), 400, "invalid_payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := send(tt.body, tt.sig)
			if r.status != tt.status || r.json(t)["error"].(map[string]any)["code"] != tt.code {
				t.Errorf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	h.wantStatus(h.postJSON("/services/tts", map[string]string{"sessionId": sessionID}), 402)

	// Out of order: a paid event arrives first, then a stale "expired" must not undo it.
	r := send(completed, stripe.SignPayload(completed, secret, time.Now()))
	h.wantStatus(r, 200)
	dup := send(completed, stripe.SignPayload(completed, secret, time.Now()))
	if dup.status != 200 || dup.json(t)["duplicate"] != true {
		t.Errorf("replayed event: %d %s", dup.status, dup.body)
	}
	h.wantStatus(send(expired, stripe.SignPayload(expired, secret, time.Now())), 200)
	link := h.waitForLink(sessionID, 20*time.Second)
	if codec, _ := probe(t, h.get(link).body); codec != "mp3" {
		t.Errorf("result codec %s", codec)
	}
	var jobs int
	h.app.db.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = 'fulfil'`).Scan(&jobs)
	if jobs != 1 {
		t.Errorf("%d fulfilment jobs, want exactly 1", jobs)
	}
}

// A payment provider that cannot be reached is not the visitor's fault: 503
// payment_provider_error, and the order is not left open.
func TestPaymentProviderUnreachable(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, map[string]string{"STRIPE_SECRET_KEY": "sk_test_parla", "STRIPE_WEBHOOK_SECRET": "whsec_x",
		"STRIPE_PUBLISHABLE_KEY": "pk_test_parla", "STRIPE_API_BASE": "http://" + testkit.FreePort(t)})
	r := h.postJSON("/payment/tts/create-checkout-session", ttsOrder("Nobody answers.", "alloy", "mp3", 1, "u@example.com", "en"))
	if r.status != 503 || codeOf(r) != "payment_provider_error" {
		t.Fatalf("got %d %s, want 503 payment_provider_error", r.status, r.body)
	}
	var open int
	h.app.db.QueryRow(`SELECT COUNT(*) FROM orders WHERE status = 'awaiting_payment'`).Scan(&open)
	if open != 0 {
		t.Errorf("%d orders left awaiting a payment that cannot happen", open)
	}
}

// TestEndToEndWithOpenAICompatibleSpeech runs the product with TTS_ENGINE=openai against a
// local server that speaks OpenAI's /v1/audio/speech (OpenAI itself is unreachable here).
func TestEndToEndWithOpenAICompatibleSpeech(t *testing.T) {
	requireMediaTools(t)
	var mu sync.Mutex
	var seen []map[string]any
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/audio/speech" || r.Header.Get("Authorization") != "Bearer sk-local" {
			http.Error(w, `{"error":{"message":"not found"}}`, 404)
			return
		}
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		format, _ := req["response_format"].(string)
		out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=330:duration=1.5",
			"-f", map[string]string{"mp3": "mp3", "pcm": "s16le", "aac": "adts", "flac": "flac", "opus": "ogg"}[format], "-ar", "24000", "-ac", "1", "pipe:1").Output()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Write(out)
	}))
	defer api.Close()
	h := startApp(t, map[string]string{"TTS_ENGINE": "openai", "OPENAI_API_KEY": "sk-local",
		"OPENAI_BASE_URL": api.URL + "/v1", "OPENAI_TTS_MODEL": "tts-1-hd"})
	sessionID, url := h.checkout(ttsOrder("Spoken by a compatible server.", "fable", "mp3", 2, "o@example.com", "zh"))
	h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
	link := h.waitForLink(sessionID, 20*time.Second)
	if codec, secs := probe(t, h.get(link).body); codec != "mp3" || secs < 1 {
		t.Errorf("result %s %.1fs", codec, secs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0]["model"] != "tts-1-hd" || seen[0]["voice"] != "fable" ||
		seen[0]["input"] != "Spoken by a compatible server." || seen[0]["speed"] != 2.0 {
		t.Errorf("speech requests: %v", seen)
	}
}

func TestEveryFormatThroughTheAPI(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, nil)
	tests := []struct{ format, voice, codec, ext, ctype string }{
		{"mp3", "alloy", "mp3", "mp3", "audio/mpeg"},
		{"opus", "nova", "opus", "opus", "audio/ogg"},
		{"aac", "onyx", "aac", "m4a", "audio/mp4"},
		{"flac", "fable", "flac", "flac", "audio/flac"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			sessionID, url := h.checkout(ttsOrder("Every format is real audio.", tt.voice, tt.format, 1, "f@example.com", "ar"))
			h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
			dl := h.get(h.waitForLink(sessionID, 20*time.Second))
			h.wantStatus(dl, 200)
			if ct := dl.header.Get("Content-Type"); ct != tt.ctype {
				t.Errorf("Content-Type %q, want %q", ct, tt.ctype)
			}
			if cd := dl.header.Get("Content-Disposition"); !strings.HasSuffix(cd, "."+tt.ext+`"`) {
				t.Errorf("Content-Disposition %q, want a .%s file", cd, tt.ext)
			}
			if codec, secs := probe(t, dl.body); codec != tt.codec || secs < 1 {
				t.Errorf("got %s of %.1fs, want %s", codec, secs, tt.codec)
			}
		})
	}
}

func TestVoiceSamplesAreMadeOnceByTheEngine(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, nil)
	first := h.get("/api/tts/samples/echo")
	h.wantStatus(first, 200)
	if codec, secs := probe(t, first.body); codec != "mp3" || secs < 2 {
		t.Errorf("sample is %s of %.1fs", codec, secs)
	}
	cached := filepath.Join(h.cfg.DataDir, "samples", "espeak", "echo-en.mp3")
	st, err := os.Stat(cached)
	if err != nil {
		t.Fatalf("sample not cached: %v", err)
	}
	second := h.get("/api/tts/samples/echo")
	if !bytes.Equal(first.body, second.body) {
		t.Error("second sample differs from the cached one")
	}
	if st2, _ := os.Stat(cached); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("sample was produced again")
	}
	if other := h.get("/api/tts/samples/onyx"); bytes.Equal(other.body, first.body) {
		t.Error("two voices have the same sample")
	}
	h.wantStatus(h.get("/api/tts/samples/bob"), 404)

	// In the visitor's interface language: a sample of its own, cached beside the English.
	for _, locale := range []string{"es", "jp", "ar"} {
		r := h.get("/api/tts/samples/echo?locale=" + locale)
		h.wantStatus(r, 200)
		if bytes.Equal(r.body, first.body) {
			t.Errorf("the %s sample is the English one", locale)
		}
		if _, err := os.Stat(filepath.Join(h.cfg.DataDir, "samples", "espeak", "echo-"+locale+".mp3")); err != nil {
			t.Errorf("%s sample not cached: %v", locale, err)
		}
	}
	if r := h.get("/api/tts/samples/echo?locale=xx"); !bytes.Equal(r.body, first.body) {
		t.Error("an unknown locale does not get the English sample")
	}
}

func TestCheckoutCreationIsRateLimitedPerClient(t *testing.T) {
	h := startApp(t, map[string]string{"RATE_LIMIT": "2"})
	order := ttsOrder("Hello.", "alloy", "mp3", 1, "r@example.com", "en")
	h.checkout(order)
	h.checkout(order)
	r := h.postJSON("/payment/tts/create-checkout-session", order)
	if r.status != 429 || r.json(t)["error"].(map[string]any)["code"] != "rate_limited" {
		t.Errorf("third checkout in a minute: %d %s", r.status, r.body)
	}
	// Session lookups ask the payment provider: limited in their own bucket; the result
	// polling of a paying visitor (about once a second) is not.
	sessionID, _ := startApp(t, nil).checkout(order) // any id will do: the count is the point
	for i := range 3 {
		r := h.get("/payment/tts/checkout-session?sessionId=" + sessionID)
		if want := map[bool]int{true: 404, false: 429}[i < 2]; r.status != want {
			t.Errorf("lookup %d: %d %s, want %d", i+1, r.status, r.body, want)
		}
	}
	for range 5 {
		if r := h.postJSON("/services/tts", map[string]string{"sessionId": sessionID}); r.status == 429 {
			t.Fatalf("result polling is rate limited: %s", r.body)
		}
	}
	// Quotes, asked as the visitor types, have a bucket of their own, four times as big:
	// the checkouts above took none of it, and the ninth quote is refused.
	quote := map[string]string{"text": "Hola, ¿cómo estás? Hoy hace buen tiempo.", "locale": "en"}
	for i := range 9 {
		r := h.postJSON("/api/tts/quote", quote)
		if want := map[bool]int{true: 200, false: 429}[i < 8]; r.status != want {
			t.Errorf("quote %d: %d %s, want %d", i+1, r.status, r.body, want)
		}
	}
}

func TestSPAFallbackAndJSONNotFound(t *testing.T) {
	h := startApp(t, nil)
	if _, err := fs.Stat(webui.Dist, "dist/index.html"); err != nil {
		testkit.Missing(t, "the web UI is not built (make ui)")
	}
	for _, p := range []string{"/", "/tts", "/payment/success?session_id=x", "/sst-payment/success"} {
		r := h.get(p)
		if r.status != 200 || !bytes.Contains(r.body, []byte("<div id=\"root\"")) {
			t.Errorf("%s does not load the app: %.200s", p, r.body)
		}
	}
	index := string(h.get("/").body)
	i := strings.Index(index, "/assets/")
	j := strings.Index(index[i:], ".js")
	if i < 0 || j < 0 {
		t.Fatalf("no script in index.html: %s", index)
	}
	js := h.do("GET", index[i:i+j+3], "", nil, map[string]string{"Accept-Encoding": "gzip"})
	if js.status != 200 || js.header.Get("Content-Encoding") != "gzip" || !strings.Contains(js.header.Get("Cache-Control"), "immutable") {
		t.Errorf("app script: %d, encoding %q, cache %q", js.status, js.header.Get("Content-Encoding"), js.header.Get("Cache-Control"))
	}
	if c := h.get("/api/config").json(t); c["contactEmail"] != "contact@localhost" {
		t.Errorf("contactEmail = %v", c["contactEmail"])
	}
	for _, p := range []string{"/api/unknown", "/services/tts/x/y", "/webhooks/x"} {
		r := h.get(p)
		if r.status != 404 || r.json(t)["error"].(map[string]any)["code"] != "not_found" {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
}

// TestShutdownPutsRunningJobsBack stops the app while an order is being produced, with a
// grace period too short to finish it; the job goes back to the queue and the next start
// delivers the order, once.
func TestShutdownPutsRunningJobsBack(t *testing.T) {
	requireMediaTools(t)
	data := t.TempDir()
	env := map[string]string{"DATA_DIR": data, "SHUTDOWN_TIMEOUT": "1s"}
	first := startApp(t, env)
	sessionID, url := first.checkout(ttsOrder(benchText(40000), "alloy", "opus", 1, "late@example.com", "en"))
	first.wantStatus(first.do("POST", url+"/pay", "", nil, nil), 303)
	var r reply
	if !testkit.WaitFor(10*time.Second, func() bool {
		r = first.postJSON("/services/tts", map[string]string{"sessionId": sessionID})
		return r.status == 202 && r.json(t)["order"].(map[string]any)["status"] == "processing"
	}) {
		t.Fatalf("order never started processing: %d %s", r.status, r.body)
	}
	stopped := time.Now()
	first.stop()
	if took := time.Since(stopped); took > 15*time.Second {
		t.Errorf("shutdown took %v with a 1 s grace period", took)
	}
	if mails, _ := filepath.Glob(filepath.Join(data, "outbox", "*.eml")); len(mails) != 0 {
		t.Fatalf("delivered before shutdown; the test needs a longer text")
	}

	second := startApp(t, env)
	link := second.waitForLink(sessionID, 90*time.Second)
	if codec, secs := probe(t, second.get(link).body); codec != "opus" || secs < 60 {
		t.Errorf("result after restart: %s of %.0fs", codec, secs)
	}
	if mails, _ := filepath.Glob(filepath.Join(data, "outbox", "*.eml")); len(mails) != 1 {
		t.Errorf("%d messages after restart, want 1", len(mails))
	}
}

// Behind a trusted proxy the limit counts the address the proxy saw, not one the client
// wrote at the left of X-Forwarded-For; refusals are logged at debug only, and every
// answer forbids content sniffing.
func TestRateLimitBehindAProxyAndQuietRefusals(t *testing.T) {
	logged := &testkit.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := startAppLogging(t, map[string]string{"RATE_LIMIT": "2", "TRUSTED_PROXIES": "127.0.0.1"}, log)
	order, _ := json.Marshal(ttsOrder("Hello.", "alloy", "mp3", 1, "r@example.com", "en"))
	post := func(xff string) reply {
		return h.do("POST", "/payment/tts/create-checkout-session", "application/json", order,
			map[string]string{"X-Forwarded-For": xff})
	}
	for i := range 4 {
		// A client that makes up a new leftmost address each time is still one client.
		r := post(fmt.Sprintf("6.6.6.%d, 198.51.100.4", i))
		if want := map[bool]int{true: 200, false: 429}[i < 2]; r.status != want {
			t.Errorf("request %d: %d %s, want %d", i+1, r.status, r.body, want)
		}
	}
	h.wantStatus(post("198.51.100.5"), 200) // another client behind the same proxy
	for range 20 {
		h.get("/api/nothing-here")
	}
	if r := h.get("/healthz"); r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q", r.header.Get("X-Content-Type-Options"))
	}
	if out := logged.String(); strings.Contains(out, "request refused") {
		t.Errorf("refusals logged at info:\n%s", out)
	}
}
