package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"parla/api/credit"
	"parla/providers/testkit"
)

// buyCredit buys amount cents of API credit through the built-in test checkout, as the
// /api page and its confirmation page do, and returns the key the first answer shows.
func (h *harness) buyCredit(amount int64, email string) string {
	h.t.Helper()
	r := h.postJSON("/payment/credit/create-checkout-session", map[string]any{"order": map[string]any{
		"amount": amount, "email": email, "emailVerify": email, "locale": "en"}})
	h.wantStatus(r, 200)
	co := r.json(h.t)
	sessionID, url := co["sessionId"].(string), co["url"].(string)
	h.wantStatus(h.postJSON("/services/credit", map[string]string{"sessionId": sessionID}), 202)
	pay := h.do("POST", url+"/pay", "", nil, nil)
	h.wantStatus(pay, 303)
	if want := h.cfg.PublicURL + "/api-payment/success?session_id=" + sessionID; pay.header.Get("Location") != want {
		h.t.Errorf("pay redirects to %q, want %q", pay.header.Get("Location"), want)
	}
	first := h.postJSON("/services/credit", map[string]string{"sessionId": sessionID})
	h.wantStatus(first, 200)
	data := first.json(h.t)["data"].(map[string]any)
	key := data["key"].(string)
	if data["full"] != true || data["balance"] != float64(amount) || data["currency"] != "eur" {
		h.t.Errorf("first answer %s", first.body)
	}
	if _, err := time.Parse(time.RFC3339, data["expiresAt"].(string)); err != nil {
		h.t.Errorf("expiresAt: %v", err)
	}
	again := h.postJSON("/services/credit", map[string]string{"sessionId": sessionID}).json(h.t)["data"].(map[string]any)
	if again["key"] != "sk-parla-…"+key[len(key)-4:] || again["full"] != false {
		h.t.Errorf("second answer gives %v, want the key masked", again["key"])
	}
	return key
}

// balanceOf is GET /v1/credit's balance, in cents.
func (h *harness) balanceOf(key string) float64 {
	h.t.Helper()
	r := h.do("GET", "/v1/credit", "", nil, map[string]string{"Authorization": "Bearer " + key})
	h.wantStatus(r, 200)
	return r.json(h.t)["balance"].(float64)
}

func apiClient(h *harness, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = h.base + "/v1"
	return openai.NewClientWithConfig(cfg)
}

// apiErrorOf is the OpenAI error a call failed with.
func apiErrorOf(t testing.TB, err error) *openai.APIError {
	t.Helper()
	var ae *openai.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is not an OpenAI API error", err)
	}
	return ae
}

func speak(t testing.TB, c *openai.Client, input string, format openai.SpeechResponseFormat) ([]byte, error) {
	t.Helper()
	res, err := c.CreateSpeech(context.Background(), openai.CreateSpeechRequest{Model: openai.TTSModel1,
		Input: input, Voice: openai.VoiceAlloy, ResponseFormat: format})
	if err != nil {
		return nil, err
	}
	defer res.Close()
	return io.ReadAll(res)
}

// Parla from code, with go-openai against the real server: credit bought through the test
// checkout, models listed, speech in every format at the site's rate per character, a 20 s
// mp3 transcribed to srt at the rate per second, a wrong key refused, and four concurrent
// 4,096-character calls on the remaining balance: only as many as it covers succeed, the
// rest are 429 insufficient_quota, and the balance never goes below zero.
func TestAPIFromCodeWithGoOpenAI(t *testing.T) {
	requireMediaTools(t)
	fake := startFakeOpenAI(t)
	h := startApp(t, fake.env())
	key := h.buyCredit(500, "dev@example.com")
	c := apiClient(h, key)
	ctx := context.Background()

	_, err := apiClient(h, "sk-parla-"+strings.Repeat("x", 43)).ListModels(ctx)
	if ae := apiErrorOf(t, err); ae.HTTPStatusCode != 401 || ae.Code != "invalid_api_key" {
		t.Errorf("wrong key: %d %v", ae.HTTPStatusCode, ae.Code)
	}
	models, err := c.ListModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range models.Models {
		ids = append(ids, m.ID)
	}
	if !strings.Contains(strings.Join(ids, " "), "tts-1") || !strings.Contains(strings.Join(ids, " "), "whisper-1") {
		t.Errorf("models %v lack tts-1 or whisper-1", ids)
	}
	// A model by id (frameworks and health checks ask), OpenAI's dated snapshots among them;
	// a name this server does not take is 404 model_not_found.
	for _, id := range []string{"whisper-1", "gpt-4o-mini-tts-2025-12-15", "gpt-4o-mini-transcribe-2025-12-15"} {
		if m, err := c.GetModel(ctx, id); err != nil || m.ID != id || m.Object != "model" {
			t.Errorf("GET /v1/models/%s: %+v, %v", id, m, err)
		}
	}
	if _, err := c.GetModel(ctx, "gpt-9"); apiErrorOf(t, err).HTTPStatusCode != 404 || apiErrorOf(t, err).Code != "model_not_found" {
		t.Errorf("GET /v1/models/gpt-9: %v, want 404 model_not_found", err)
	}

	text := strings.Repeat("Parla speaks. ", 9)[:120]
	before := h.balanceOf(key)
	mp3, err := speak(t, c, text, openai.SpeechResponseFormatMp3)
	if err != nil {
		t.Fatal(err)
	}
	if codec, secs := probe(t, mp3); codec != "mp3" || secs < 2 {
		t.Errorf("speech is %s of %.1fs, want mp3", codec, secs)
	}
	if cost := before - h.balanceOf(key); math.Abs(cost-11.88) > 0.01 {
		t.Errorf("120 characters cost %.3f cents, want 11.88", cost)
	}
	for format, codec := range map[openai.SpeechResponseFormat]string{openai.SpeechResponseFormatWav: "pcm_s16le",
		openai.SpeechResponseFormatOpus: "opus", openai.SpeechResponseFormatFlac: "flac", openai.SpeechResponseFormatAac: "aac"} {
		audio, err := speak(t, c, "Short.", format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if got, secs := probe(t, audio); got != codec || secs <= 0 {
			t.Errorf("%s decodes as %s of %.2fs", format, got, secs)
		}
		// OpenAI's aac is raw ADTS frames, each starting with the 12-bit sync word (not M4A).
		if format == openai.SpeechResponseFormatAac && (len(audio) < 2 || audio[0] != 0xFF || audio[1]&0xF0 != 0xF0) {
			t.Errorf("aac starts % x, want an ADTS frame", audio[:min(len(audio), 8)])
		}
	}
	if pcm, err := speak(t, c, "Short.", openai.SpeechResponseFormatPcm); err != nil || len(pcm) < 24000/2 || len(pcm)%2 != 0 {
		t.Errorf("pcm: %d bytes, %v", len(pcm), err)
	}

	clip := paddedMP3(t, 20)
	before = h.balanceOf(key)
	srt, err := c.CreateTranscription(ctx, openai.AudioRequest{Model: openai.Whisper1, FilePath: clip, Format: openai.AudioResponseFormatSRT})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(srt.Text, "00:00:00,000 --> ") || !strings.Contains(srt.Text, "Hello from Parla.") {
		t.Errorf("srt:\n%s", srt.Text)
	}
	if cost := before - h.balanceOf(key); math.Abs(cost-19.8) > 0.2 {
		t.Errorf("20 s of audio cost %.3f cents, want 19.8", cost)
	}

	exhaust(t, h, c, key)
}

// paddedMP3 is an mp3 (128 kb/s) of the given seconds: speech padded with silence.
func paddedMP3(t testing.TB, seconds int) string {
	dir := t.TempDir()
	wav := testkit.Speech(t, dir, "speech.wav", "Hello from Parla. This recording is padded with silence.")
	out := filepath.Join(dir, "padded.mp3")
	d := strconv.Itoa(seconds)
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-y", "-i", wav,
		"-af", "apad=whole_dur="+d, "-t", d, "-c:a", "libmp3lame", "-b:a", "128k", out)
	return out
}

// exhaust makes four 4,096-character calls at once on what is left.
func exhaust(t *testing.T, h *harness, c *openai.Client, key string) {
	left := h.balanceOf(key)
	const price = 405.504 // 4,096 characters at 99 cents per 1,000
	covered := int(math.Min(4, math.Floor(left/price)))
	long := strings.Repeat("Four thousand characters of speech, spoken at once. ", 80)[:4096]
	var mu sync.Mutex
	var ok, quota int
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := speak(t, c, long, openai.SpeechResponseFormatOpus)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ok++
				return
			}
			if ae := apiErrorOf(t, err); ae.HTTPStatusCode == 429 && ae.Code == "insufficient_quota" && ae.Type == "insufficient_quota" {
				quota++
				return
			}
			t.Errorf("concurrent call: %v", err)
		}()
	}
	wg.Wait()
	after := h.balanceOf(key)
	if ok != covered || quota != 4-covered || after < 0 || math.Abs(after-(left-float64(ok)*price)) > 0.001 {
		t.Errorf("%.3f cents left for four calls of %.3f: %d succeeded, %d insufficient_quota, %.3f left; want %d, %d",
			left, price, ok, quota, after, covered, 4-covered)
	}
}

// A retried call with the same Idempotency-Key is charged once (answered again free
// MaxRepeats times, then refused); errors name the parameter
// in OpenAI's shape; a chunked upload (as the JS SDK streams files) is read; the letter
// carries the key and nothing stored holds it.
func TestAPIIdempotencyErrorsChunkedUploadsAndTheLetter(t *testing.T) {
	requireMediaTools(t)
	fake := startFakeOpenAI(t)
	h := startApp(t, fake.env())
	r := h.postJSON("/payment/credit/create-checkout-session", map[string]any{"order": map[string]any{
		"amount": 499, "email": "letter@example.com", "emailVerify": "letter@example.com"}})
	if r.status != 400 || r.json(t)["error"].(map[string]any)["code"] != "invalid_amount" {
		t.Errorf("499 cents: %d %s", r.status, r.body)
	}
	key := h.buyCredit(500, "letter@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key, "Idempotency-Key": "call-1"}
	body, _ := json.Marshal(map[string]any{"model": "tts-1", "input": "Charged once.", "voice": "coral"})
	for range 2 {
		h.wantStatus(h.do("POST", "/v1/audio/speech", "application/json", body, auth), 200)
	}
	if got := h.balanceOf(key); math.Abs(got-(500-0.099*13)) > 0.0005 {
		t.Errorf("balance %.3f after a retried call, want one charge: %.3f", got, 500-0.099*13)
	}
	// A lost answer's retries are answered free a few times, not for good.
	for range credit.MaxRepeats - 1 {
		h.wantStatus(h.do("POST", "/v1/audio/speech", "application/json", body, auth), 200)
	}
	if r := h.do("POST", "/v1/audio/speech", "application/json", body, auth); r.status != 409 || !strings.Contains(string(r.body), `"code":"idempotency_key_spent"`) {
		t.Errorf("repeat %d of a settled call: %d %s, want 409 idempotency_key_spent", credit.MaxRepeats+1, r.status, r.body)
	}
	other, _ := json.Marshal(map[string]any{"model": "tts-1", "input": "Another text.", "voice": "coral"})
	if r := h.do("POST", "/v1/audio/speech", "application/json", other, auth); r.status != 400 || !strings.Contains(string(r.body), `"param":"Idempotency-Key"`) {
		t.Errorf("the key reused for another request: %d %s", r.status, r.body)
	}
	bad, _ := json.Marshal(map[string]any{"model": "tts-1", "input": "Hi", "voice": "nobody"})
	r = h.do("POST", "/v1/audio/speech", "application/json", bad, map[string]string{"Authorization": "Bearer " + key})
	var e struct {
		Error struct {
			Message, Type, Code string
			Param               *string
		} `json:"error"`
	}
	json.Unmarshal(r.body, &e)
	if r.status != 400 || e.Error.Type != "invalid_request_error" || e.Error.Param == nil || *e.Error.Param != "voice" {
		t.Errorf("unknown voice: %d %s", r.status, r.body)
	}

	// A chunked multipart body, as a stream, larger than the JSON routes' 1 MB limit.
	clip := paddedMP3(t, 100)
	if st, _ := os.Stat(clip); st.Size() <= 1<<20 {
		t.Fatalf("the clip has %d bytes, want more than 1 MB", st.Size())
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		mw.WriteField("model", "whisper-1")
		mw.WriteField("response_format", "verbose_json")
		fw, _ := mw.CreateFormFile("file", "clip.mp3")
		data, _ := os.ReadFile(clip)
		fw.Write(data)
		pw.CloseWithError(mw.Close())
	}()
	req, _ := http.NewRequest("POST", h.base+"/v1/audio/transcriptions", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(out, []byte(`"task":"transcribe"`)) || req.ContentLength > 0 {
		t.Errorf("chunked upload (%v): %d %s", req.TransferEncoding, res.StatusCode, out)
	}

	var letter []byte
	testkit.Eventually(t, 10*time.Second, func() bool {
		mails, _ := filepath.Glob(filepath.Join(h.cfg.DataDir, "outbox", "*.eml"))
		if len(mails) == 1 {
			letter, _ = os.ReadFile(mails[0])
		}
		return len(mails) == 1
	}, "the key's letter")
	if !bytes.Contains(letter, []byte(key)) {
		t.Errorf("the letter lacks the key:\n%s", letter)
	}
	var stored int
	h.app.db.QueryRow(`SELECT COUNT(*) FROM credit_keys WHERE key_sealed != '' OR key_hash = ?`, key).Scan(&stored)
	if stored != 0 {
		t.Error("the key is stored beside its hash")
	}
}

// RATE_LIMIT applies to the API per client and per key (four times the site's), and 0
// turns it off (every other test here runs with 0).
func TestAPIRateLimit(t *testing.T) {
	h := startApp(t, map[string]string{"RATE_LIMIT": "2"})
	key := h.buyCredit(500, "rate@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key}
	for i := range 8 {
		h.wantStatus(h.do("GET", "/v1/models", "", nil, auth), 200)
		_ = i
	}
	r := h.do("GET", "/v1/models", "", nil, auth)
	if r.status != 429 || !strings.Contains(string(r.body), `"code":"rate_limit_exceeded"`) {
		t.Errorf("the ninth call in a minute: %d %s", r.status, r.body)
	}
}

// The operator sees the keys masked with their balance and calls, counts calls per model
// in /metrics, and a revoked key is refused at once.
func TestAPIOperatorKeysRevokeAndMetrics(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, map[string]string{"ADMIN_TOKEN": e2eAdminToken})
	key := h.buyCredit(500, "ops@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key}
	body, _ := json.Marshal(map[string]any{"model": "tts-1-hd", "input": "Counted.", "voice": "echo"})
	h.wantStatus(h.do("POST", "/v1/audio/speech", "application/json", body, auth), 200)

	admin := map[string]string{"Authorization": "Bearer " + e2eAdminToken}
	metrics := string(h.do("GET", "/metrics", "", nil, admin).body)
	if !strings.Contains(metrics, `parla_api_calls_total{model="tts-1-hd"} 1`) ||
		!strings.Contains(metrics, `parla_api_charged_millicents_total{model="tts-1-hd"} 792`) {
		t.Errorf("metrics lack the call per model")
	}
	r := h.do("GET", "/admin/keys", "", nil, admin)
	h.wantStatus(r, 200)
	var list struct {
		Keys []struct {
			ID, Key, Status, Letter string
			Balance, Held           float64
			Calls                   int64
		}
	}
	json.Unmarshal(r.body, &list)
	if len(list.Keys) != 1 || list.Keys[0].Key != "sk-parla-…"+key[len(key)-4:] || list.Keys[0].Calls != 1 ||
		list.Keys[0].Letter != "sent" || list.Keys[0].Held != 0 ||
		math.Abs(list.Keys[0].Balance-(500-0.792)) > 0.0005 || strings.Contains(string(r.body), key) {
		t.Fatalf("admin keys: %s", r.body)
	}
	h.wantStatus(h.do("POST", "/admin/keys/"+list.Keys[0].ID+"/revoke", "", nil, admin), 200)
	revoked := h.do("GET", "/v1/models", "", nil, auth)
	if revoked.status != 401 || !strings.Contains(string(revoked.body), `"code":"invalid_api_key"`) {
		t.Errorf("a revoked key: %d %s", revoked.status, revoked.body)
	}
	h.wantStatus(h.do("POST", "/admin/keys/"+list.Keys[0].ID+"/revoke", "", nil, admin), 409)
}

// A key the operator revokes on one node is refused at once by every node: each call reads
// the key's row in the shared database, no node keeps a copy.
func TestRevokedKeyRefusedOnEveryNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	c := startCluster(t, 2, map[string]string{"ADMIN_TOKEN": e2eAdminToken})
	key := c.at(0).buyCredit(500, "nodes@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key}
	other := c.at(1)
	other.wantStatus(other.do("GET", "/v1/credit", "", nil, auth), 200)

	admin := map[string]string{"Authorization": "Bearer " + e2eAdminToken}
	var list struct{ Keys []struct{ ID string } }
	json.Unmarshal(c.at(0).do("GET", "/admin/keys", "", nil, admin).body, &list)
	if len(list.Keys) != 1 {
		t.Fatalf("admin keys: %+v", list)
	}
	c.at(0).wantStatus(c.at(0).do("POST", "/admin/keys/"+list.Keys[0].ID+"/revoke", "", nil, admin), 200)
	for i := range c.nodes {
		for _, path := range []string{"/v1/credit", "/v1/models"} {
			r := c.at(i).do("GET", path, "", nil, auth)
			if r.status != 401 || !strings.Contains(string(r.body), `"code":"invalid_api_key"`) {
				t.Errorf("node %d, %s with the revoked key: %d %s", i+1, path, r.status, r.body)
			}
		}
	}
}

// transcriptionForm is a multipart transcription request of file with fields.
func transcriptionForm(t testing.TB, file string, fields ...string) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		mw.WriteField(fields[i], fields[i+1])
	}
	fw, _ := mw.CreateFormFile("file", filepath.Base(file))
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// json and verbose_json carry OpenAI's usage (the audio's seconds), verbose_json asked
// for words carries words; a file of silence is answered 200 with an empty text at no
// cost, as OpenAI answers it (the site still refuses silence before payment).
func TestAPITranscriptionUsageAndSilence(t *testing.T) {
	requireMediaTools(t)
	fake := startFakeOpenAI(t)
	h := startApp(t, fake.env())
	key := h.buyCredit(500, "usage@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key}

	clip := paddedMP3(t, 20)
	for _, format := range []string{"json", "verbose_json"} {
		fields := []string{"model", "whisper-1", "response_format", format}
		if format == "verbose_json" {
			fields = append(fields, "timestamp_granularities[]", "word")
		}
		body, ctype := transcriptionForm(t, clip, fields...)
		r := h.do("POST", "/v1/audio/transcriptions", ctype, body, auth)
		var out struct {
			Text  string
			Words *[]any
			Usage struct {
				Type    string
				Seconds float64
			}
		}
		if err := json.Unmarshal(r.body, &out); err != nil || r.status != 200 {
			t.Fatalf("%s: %d %s", format, r.status, r.body)
		}
		if out.Usage.Type != "duration" || math.Abs(out.Usage.Seconds-20) > 0.2 || out.Text == "" {
			t.Errorf("%s: %s, want usage of 20 seconds", format, r.body)
		}
		if (out.Words != nil) != (format == "verbose_json") {
			t.Errorf("%s asked for words: %s", format, r.body)
		}
	}

	// The prompt and the temperature reach the engine.
	body, ctype := transcriptionForm(t, clip, "model", "whisper-1", "prompt", "Parla, Kokoro", "temperature", "0.4")
	h.wantStatus(h.do("POST", "/v1/audio/transcriptions", ctype, body, auth), 200)
	if got := fake.received(); len(got) == 0 || got[len(got)-1].Prompt != "Parla, Kokoro" || got[len(got)-1].Temperature != "0.40" {
		t.Errorf("the engine received %+v, want the prompt and the temperature", got[len(got)-1])
	}

	dir := t.TempDir()
	silence := filepath.Join(dir, "silence.wav")
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i",
		"anullsrc=r=16000:cl=mono", "-t", "3", silence)
	before := h.balanceOf(key)
	body, ctype = transcriptionForm(t, silence, "model", "gpt-4o-mini-transcribe-2025-12-15")
	r := h.do("POST", "/v1/audio/transcriptions", ctype, body, auth)
	if r.status != 200 || !strings.HasPrefix(string(r.body), `{"text":""`) || r.header.Get("Parla-Charged-Cents") != "0.000" {
		t.Errorf("3 s of silence: %d %s (charged %q), want 200 with an empty text", r.status, r.body, r.header.Get("Parla-Charged-Cents"))
	}
	if after := h.balanceOf(key); after != before {
		t.Errorf("3 s of silence cost %.3f cents, want nothing", before-after)
	}
}

// A client that gives up before the answer (the SDKs time out, then retry) is charged
// nothing: the engine's work stops (the stand-in sees its request abandoned) and the hold
// is given back at once. Before, the work ran on and settled: 19.8 c for an answer nobody
// received.
func TestAPIClientGoneIsNotCharged(t *testing.T) {
	requireMediaTools(t)
	fake := startFakeOpenAI(t)
	h := startApp(t, fake.env())
	key := h.buyCredit(500, "gone@example.com")
	clip := paddedMP3(t, 20)
	fake.delay.Store(int64(20 * time.Second))

	before := h.balanceOf(key)
	body, ctype := transcriptionForm(t, clip, "model", "whisper-1")
	// The client gives up once the engine works on its call (as an SDK's timeout does), not
	// after a fixed time: on a busy machine the upload and the measure alone may take seconds.
	ctx, giveUp := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", h.base+"/v1/audio/transcriptions", bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+key)
	answered := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			err = fmt.Errorf("the call answered %d; the engine holds it 20 s", res.StatusCode)
		}
		answered <- err
	}()
	testkit.Eventually(t, 30*time.Second, func() bool { return len(fake.received()) == 1 }, "the engine working on the call")
	giveUp()
	if err := <-answered; !errors.Is(err, context.Canceled) {
		t.Fatalf("the client that gave up: %v", err)
	}
	testkit.Eventually(t, 10*time.Second, func() bool { return fake.abandoned.Load() == 1 }, "the engine's request abandoned")
	var calls []any
	testkit.Eventually(t, 10*time.Second, func() bool {
		r := h.do("GET", "/v1/credit", "", nil, map[string]string{"Authorization": "Bearer " + key})
		calls, _ = r.json(t)["calls"].([]any)
		return len(calls) == 1 && calls[0].(map[string]any)["status"] == "released"
	}, "the call released")
	if after := h.balanceOf(key); after != before {
		t.Errorf("a call whose client left after 3 s cost %.3f cents (calls %v), want nothing", before-after, calls)
	}
}
