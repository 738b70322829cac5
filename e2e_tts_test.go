package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers/testkit"
)

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
	// The amount as a Russian reader writes it, and the banner saying nobody is charged.
	if !bytes.Contains(page.body, []byte(`data-testid="amount">0,99`)) || !bytes.Contains(page.body, []byte("ТЕСТОВАЯ ОПЛАТА")) {
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

// TestSpeechLanguageOverHTTP: the page learns the engine's languages and, before paying,
// the language a text will be spoken in; the order carries it to the engine and stores it;
// a text in a language or script the engine lacks is refused and nothing is stored.
func TestSpeechLanguageOverHTTP(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, nil)

	cfg := h.get("/api/config").json(t)
	var langs []string
	for _, l := range cfg["tts"].(map[string]any)["languages"].([]any) {
		langs = append(langs, l.(string))
	}
	for _, want := range []string{"en", "ja", "es", "ru", "zh", "ar", "fr", "de", "hi", "ko"} {
		if !slices.Contains(langs, want) {
			t.Errorf("tts.languages lacks %q: %v", want, langs)
		}
	}
	if slices.Contains(langs, "bo") || slices.Contains(langs, "km") || len(langs) < 100 {
		t.Errorf("tts.languages is not espeak-ng's list: %v", langs)
	}

	spanish := "Esta mañana hacía frío, así que nos quedamos en casa leyendo libros. Por la tarde salió el sol."
	tibetan := "བོད་ཀྱི་སྐད་ཡིག་ནི་བོད་ཀྱི་མི་རིགས་ཀྱི་སྐད་ཡིག་ཡིན།"
	quotes := []struct {
		name           string
		body           map[string]any
		status         int
		language, code string
		detected       bool
	}{
		{"spanish detected", map[string]any{"text": spanish, "locale": "en"}, 200, "es", "", true},
		{"chosen", map[string]any{"text": spanish, "language": "pt-BR", "locale": "en"}, 200, "pt", "", false},
		{"cannot tell: interface language", map[string]any{"text": "yyyyyyyy", "locale": "es"}, 200, "es", "", true},
		{"kanji for a Japanese visitor", map[string]any{"text": "東京都", "locale": "jp"}, 200, "ja", "", true},
		{"tibetan", map[string]any{"text": tibetan, "locale": "en"}, 400, "", "language_unsupported", false},
		{"unknown chosen", map[string]any{"text": spanish, "language": "xx"}, 400, "", "language_unsupported", false},
		{"empty", map[string]any{"text": " "}, 400, "", "empty_text", false},
	}
	for _, q := range quotes {
		t.Run("quote "+q.name, func(t *testing.T) {
			r := h.postJSON("/api/tts/quote", q.body)
			m := r.json(t)
			if r.status != q.status {
				t.Fatalf("got %d %s, want %d", r.status, r.body, q.status)
			}
			if q.code != "" {
				if m["error"].(map[string]any)["code"] != q.code {
					t.Errorf("got %s, want %s", r.body, q.code)
				}
				return
			}
			if m["language"] != q.language || m["detected"] != q.detected || m["amount"] != 99.0 {
				t.Errorf("got %s, want %s (detected %v)", r.body, q.language, q.detected)
			}
		})
	}

	// Refused at checkout, before anything is stored or charged.
	for _, bad := range []map[string]any{
		ttsOrder(tibetan, "alloy", "mp3", 1, "a@example.com", "en"),
		func() map[string]any {
			o := ttsOrder(spanish, "alloy", "mp3", 1, "a@example.com", "en")
			o["order"].(map[string]any)["language"] = "tlh"
			return o
		}(),
	} {
		r := h.postJSON("/payment/tts/create-checkout-session", bad)
		if r.status != 400 || r.json(t)["error"].(map[string]any)["code"] != "language_unsupported" {
			t.Errorf("got %d %s, want 400 language_unsupported", r.status, r.body)
		}
	}
	var n int
	h.app.db.QueryRow(`SELECT COUNT(*) FROM orders`).Scan(&n)
	if n != 0 {
		t.Fatalf("refused orders left %d rows", n)
	}

	// A Spanish text is spoken in Spanish: the answer says so, the order stores it.
	r := h.postJSON("/payment/tts/create-checkout-session", ttsOrder(spanish, "nova", "mp3", 1, "a@example.com", "en"))
	h.wantStatus(r, 200)
	answer := r.json(t)
	if answer["language"] != "es" {
		t.Errorf("checkout answer %s, want language es", r.body)
	}
	var raw string
	h.app.db.QueryRow(`SELECT params FROM orders WHERE session_id = ?`, answer["sessionId"]).Scan(&raw)
	var params struct {
		Language string `json:"language"`
		Mixed    bool   `json:"mixed"`
	}
	if err := json.Unmarshal([]byte(raw), &params); err != nil || params.Language != "es" || params.Mixed {
		t.Errorf("stored parameters %s", raw)
	}
	h.wantStatus(h.do("POST", answer["url"].(string)+"/pay", "", nil, nil), 303)
	link := h.waitForLink(answer["sessionId"].(string), 30*time.Second)
	codec, secs := probe(t, h.get(link).body)
	if codec != "mp3" || secs < 4 || secs > 15 {
		t.Errorf("result is %s of %.1fs", codec, secs)
	}

	// Paragraphs in two languages: each read in its own, the order says so.
	english := "The weather was cold this morning, so we stayed at home and read books all day long."
	r = h.postJSON("/payment/tts/create-checkout-session", ttsOrder(english+"\n\n"+spanish, "echo", "mp3", 1, "a@example.com", "en"))
	h.wantStatus(r, 200)
	answer = r.json(t)
	h.app.db.QueryRow(`SELECT params FROM orders WHERE session_id = ?`, answer["sessionId"]).Scan(&raw)
	params.Language, params.Mixed = "", false
	if err := json.Unmarshal([]byte(raw), &params); err != nil || !params.Mixed || answer["language"] != params.Language {
		t.Errorf("mixed order: answer %s, stored %s", r.body, raw)
	}
	h.wantStatus(h.do("POST", answer["url"].(string)+"/pay", "", nil, nil), 303)
	link = h.waitForLink(answer["sessionId"].(string), 30*time.Second)
	if codec, secs := probe(t, h.get(link).body); codec != "mp3" || secs < 8 || secs > 30 {
		t.Errorf("mixed result is %s of %.1fs", codec, secs)
	}
}

// previewText is longer than a preview: the preview speaks its first sentences only.
const previewText = "The quick brown fox jumps over the lazy dog. It was a bright cold day in April, and the clocks were striking thirteen. " +
	"Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, I thought I would sail about a little. " +
	"This last sentence is never spoken in the preview, since the preview stops at about two hundred characters."

func TestTTSPreviewIsCachedAndRateLimitedInItsOwnBucket(t *testing.T) {
	requireMediaTools(t)
	// The proxy in front is this machine: X-Forwarded-For names the visitor.
	h := startApp(t, map[string]string{"RATE_LIMIT": "3", "TRUSTED_PROXIES": "127.0.0.1"})
	body := map[string]any{"text": previewText, "voice": "nova", "speed": 1.25, "format": "opus", "language": "en", "locale": "en"}
	from := func(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr} }
	preview := func(header map[string]string) reply {
		b, _ := json.Marshal(body)
		r := h.do("POST", "/api/tts/preview", "application/json", b, header)
		if r.status == 200 {
			// No answer tells whether the preview was made for this visitor or found made.
			for name := range r.header {
				if strings.Contains(strings.ToLower(name), "cache") && name != "Cache-Control" {
					t.Errorf("the preview answers %s: %q", name, r.header.Get(name))
				}
			}
		}
		return r
	}
	kept := func() []string {
		files, _ := filepath.Glob(filepath.Join(h.cfg.DataDir, "previews", "espeak", "*"))
		return files
	}

	first := preview(nil)
	h.wantStatus(first, 200)
	if ct := first.header.Get("Content-Type"); ct != "audio/ogg" && !strings.HasPrefix(ct, "audio/") {
		t.Errorf("Content-Type %q", ct)
	}
	if n := first.header.Get("X-Preview-Characters"); n == "" || len(n) > 3 {
		t.Errorf("preview spoke %q characters, want at most ~200", n)
	}
	codec, secs := probe(t, first.body)
	if codec != "opus" || secs < 3 || secs > 20 {
		t.Errorf("preview is %s of %.1fs, want opus of a few seconds", codec, secs)
	}
	cached := kept()
	if len(cached) != 1 {
		t.Fatalf("cache holds %v, want one preview", cached)
	}
	st, _ := os.Stat(cached[0])

	// The same text, voice, speed, format and language from the same visitor: from the
	// cache, unchanged.
	second := preview(nil)
	h.wantStatus(second, 200)
	if len(kept()) != 1 || !bytes.Equal(first.body, second.body) {
		t.Errorf("second preview not served from the cache (cache holds %v)", kept())
	}
	if st2, _ := os.Stat(cached[0]); st2.Size() != st.Size() {
		t.Error("cached preview changed")
	}
	// Another visitor's same text is made anew: what one visitor previewed is not told
	// to another by an answer's speed. An IPv6 visitor is one /64.
	h.wantStatus(preview(from("203.0.113.9")), 200)
	if n := len(kept()); n != 2 {
		t.Errorf("another visitor's preview: the cache holds %d previews, want 2 (made anew)", n)
	}
	h.wantStatus(preview(from("2001:db8:1:2::1")), 200)
	h.wantStatus(preview(from("2001:db8:1:2:ffff::9")), 200)
	if n := len(kept()); n != 3 {
		t.Errorf("two addresses of one /64: the cache holds %d previews, want 3 (one for the /64)", n)
	}
	// Another speed is another preview.
	body["speed"] = 1.0
	third := preview(nil)
	h.wantStatus(third, 200)
	if len(kept()) != 4 || bytes.Equal(third.body, first.body) {
		t.Error("a preview at another speed came from the cache")
	}
	// The fourth in a minute is refused, cached or not...
	r := preview(nil)
	if r.status != 429 || r.json(t)["error"].(map[string]any)["code"] != "rate_limited" {
		t.Errorf("fourth preview in a minute: %d %s", r.status, r.body)
	}
	// ...while quotes and checkouts keep their own buckets.
	if q := h.postJSON("/api/tts/quote", map[string]string{"text": "Hello there.", "locale": "en"}); q.status != 200 {
		t.Errorf("quote after previews: %d %s", q.status, q.body)
	}
	h.checkout(ttsOrder("Hello.", "alloy", "mp3", 1, "p@example.com", "en"))
}

func TestTTSPreviewRefusesWhatAnOrderWould(t *testing.T) {
	h := startApp(t, nil)
	for code, body := range map[string]map[string]any{
		"invalid_voice":        {"text": "Hello.", "voice": "bob", "format": "mp3"},
		"invalid_format":       {"text": "Hello.", "voice": "nova", "format": "wav"},
		"invalid_speed":        {"text": "Hello.", "voice": "nova", "format": "mp3", "speed": 9},
		"empty_text":           {"text": "  ", "voice": "nova", "format": "mp3"},
		"language_unsupported": {"text": "Hello.", "voice": "nova", "format": "mp3", "language": "xx-Zzzz"},
	} {
		r := h.postJSON("/api/tts/preview", body)
		if r.status != 400 || r.json(t)["error"].(map[string]any)["code"] != code {
			t.Errorf("%s: %d %s", code, r.status, r.body)
		}
	}
}

// BenchmarkTTSPreview measures a preview click with espeak-ng: the endpoint's answer for
// a new text (not cached), median of 20. Budget: 1.5 s from the click to playback.
//
//	go test -run '^$' -bench BenchmarkTTSPreview -benchtime 1x .
func BenchmarkTTSPreview(b *testing.B) {
	requireMediaTools(b)
	h := startApp(b, nil)
	for range b.N {
		var took []time.Duration
		for i := range 20 {
			body := map[string]any{"text": strings.Repeat("x", i) + " " + previewText, "voice": "alloy", "format": "mp3", "speed": 1, "locale": "en"}
			start := time.Now()
			r := h.postJSON("/api/tts/preview", body)
			took = append(took, time.Since(start))
			if r.status != http.StatusOK {
				b.Fatalf("preview %d: %d %s", i, r.status, r.body)
			}
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		b.ReportMetric(took[10].Seconds(), "median-s")
		b.ReportMetric(took[19].Seconds(), "max-s")
		if took[10] > 1500*time.Millisecond {
			b.Errorf("median preview %v, over the 1.5 s budget", took[10])
		}
	}
}
