package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/providers/testkit"
)

// fakeOpenAI is a local server that speaks OpenAI's /v1/audio/transcriptions (OpenAI itself
// is unreachable here). It checks the fields a real one needs, measures the audio it
// received with ffprobe and answers verbose_json with segments spread over that length.
type fakeOpenAI struct {
	*httptest.Server
	t        testing.TB
	mu       sync.Mutex
	requests []transcriptionRequest
	noisy    atomic.Bool // the answers end with a "[MUSIC]" segment, which the cleaner drops
	// delay holds each answer that long (nanoseconds); abandoned counts the requests whose
	// caller went away meanwhile.
	delay     atomic.Int64
	abandoned atomic.Int32
	// gap is how long a streamed answer (stream=true) waits after its first delta
	// (nanoseconds).
	gap atomic.Int64
	// broken makes a streamed answer fail after its first delta (an error event).
	broken atomic.Bool
	// refuse makes every transcription answer 400, as a server that will not take the audio.
	refuse atomic.Bool
}

type transcriptionRequest struct {
	Endpoint                          string // transcriptions, or translations (English wanted)
	Model, Format, Language, FileName string
	Prompt, Temperature               string
	Stream                            bool
	Bytes                             int
	Seconds                           float64
}

func startFakeOpenAI(t testing.TB) *fakeOpenAI {
	f := &fakeOpenAI{t: t}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOpenAI) env() map[string]string {
	return map[string]string{"STT_ENGINE": "openai", "OPENAI_API_KEY": "sk-local", "OPENAI_BASE_URL": f.URL + "/v1"}
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	endpoint, _ := strings.CutPrefix(r.URL.Path, "/v1/audio/")
	if (endpoint != "transcriptions" && endpoint != "translations") || r.Header.Get("Authorization") != "Bearer sk-local" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		http.Error(w, `{"error":{"message":"bad form"}}`, http.StatusBadRequest)
		return
	}
	file, header, err := r.FormFile("file")
	if err != nil {
		http.Error(w, `{"error":{"message":"no file"}}`, http.StatusBadRequest)
		return
	}
	defer file.Close()
	data, _ := io.ReadAll(file)
	req := transcriptionRequest{Endpoint: endpoint, Model: r.FormValue("model"), Format: r.FormValue("response_format"),
		Language: r.FormValue("language"), FileName: header.Filename, Bytes: len(data),
		Prompt: r.FormValue("prompt"), Temperature: r.FormValue("temperature"), Stream: r.FormValue("stream") == "true"}
	req.Seconds = probeSeconds(f.t, data)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	if f.refuse.Load() {
		http.Error(w, `{"error":{"message":"the engine refuses this audio","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	if d := time.Duration(f.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			f.abandoned.Add(1)
			return
		}
	}
	if req.Stream && req.Model != "" && req.Seconds > 0 {
		f.stream(w, time.Duration(f.gap.Load()))
		return
	}
	if req.Model == "" || req.Format != "verbose_json" || req.Seconds <= 0 {
		http.Error(w, `{"error":{"message":"want model, verbose_json and audio"}}`, http.StatusBadRequest)
		return
	}
	half := req.Seconds / 2
	task, second := "transcribe", " This clip was transcribed."
	if endpoint == "translations" {
		task, second = "translate", " This clip was translated."
	}
	segments := []map[string]any{
		{"id": 0, "start": 0, "end": half, "text": " Hello from Parla."},
		{"id": 1, "start": half, "end": req.Seconds, "text": second},
	}
	if f.noisy.Load() { // what an engine writes over music
		segments = append(segments, map[string]any{"id": 2, "start": half, "end": req.Seconds, "text": " [MUSIC]"})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"task": task, "language": "english", "duration": req.Seconds,
		"text": "Hello from Parla." + second, "segments": segments,
	})
}

// stream answers as OpenAI's stream=true: two transcript.text.delta events, gap apart,
// then transcript.text.done.
func (f *fakeOpenAI) stream(w http.ResponseWriter, gap time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i, e := range []map[string]any{
		{"type": "transcript.text.delta", "delta": "Hello from Parla."},
		{"type": "transcript.text.delta", "delta": " This clip was streamed."},
		{"type": "transcript.text.done", "text": "Hello from Parla. This clip was streamed."},
	} {
		if i == 1 {
			time.Sleep(gap)
		}
		if i == 1 && f.broken.Load() {
			e = map[string]any{"type": "error", "error": map[string]any{"message": "the engine fell over"}}
		}
		data, _ := json.Marshal(e)
		w.Write([]byte("data: " + string(data) + "\n\n"))
		w.(http.Flusher).Flush()
	}
}

func (f *fakeOpenAI) received() []transcriptionRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]transcriptionRequest(nil), f.requests...)
}

// probeSeconds is the duration ffprobe reads from data; 0 when it reads none.
func probeSeconds(t testing.TB, data []byte) float64 {
	path := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return 0
	}
	out, err := exec.Command(testkit.Binary(t, "ffprobe"), "-v", "error", "-show_entries",
		"format=duration", "-of", "csv=p=0", path).Output()
	if err != nil {
		return 0
	}
	s, _ := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	return s
}

// multipartBody builds an upload form; each field is (name, filename, content).
func multipartBody(t testing.TB, fields ...[3]string) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		var w io.Writer
		var err error
		if f[1] == "" {
			w, err = mw.CreateFormField(f[0])
		} else {
			w, err = mw.CreateFormFile(f[0], f[1])
		}
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[2]))
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func (h *harness) upload(name string, data []byte) reply {
	h.t.Helper()
	ctype, body := multipartBody(h.t, [3]string{"file", name, string(data)})
	return h.do("POST", "/services/sst/uploadaudio", ctype, body, nil)
}

// sttPrice is the spec's audio formula: max(99, ceil(99 × s / 100)).
func sttPrice(s int64) int64 { return max(99, (99*s+99)/100) }

// vttPrice is the spec's video formula: max(99, ceil(99 × s / 60)).
func vttPrice(s int64) int64 { return max(99, (99*s+59)/60) }

// dirFiles lists the regular files under dir.
func dirFiles(t testing.TB, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Unpaid uploads past a quota are refused over HTTP with their own codes, before the file
// is measured, and nothing of the file is kept: UPLOAD_QUOTA_PER_CLIENT (429
// upload_quota), UPLOAD_QUOTA_TOTAL (503 uploads_full). api/orders TestUploadQuotas counts
// the kept uploads, ten at once among them.
func TestUploadQuotasOverHTTP(t *testing.T) {
	env := startFakeOpenAI(t).env()
	for _, c := range []struct {
		perClient, total, code string
		status                 int
	}{
		{"100", "0", "upload_quota", 429},
		{"0", "100", "uploads_full", 503},
	} {
		env["UPLOAD_QUOTA_PER_CLIENT"], env["UPLOAD_QUOTA_TOTAL"] = c.perClient, c.total
		h := startApp(t, env)
		r := h.upload("talk.mp3", bytes.Repeat([]byte("x"), 1000))
		if r.status != c.status || codeOf(r) != c.code {
			t.Errorf("1000 bytes with quotas %s per client, %s in all: %d %s, want %d %s",
				c.perClient, c.total, r.status, r.body, c.status, c.code)
		}
		for _, dir := range []string{"uploads", "tmp"} {
			if left := dirFiles(t, filepath.Join(h.cfg.DataDir, dir)); len(left) != 0 {
				t.Errorf("a refused upload left %v", left)
			}
		}
	}
}

// An upload past STT_MAX_DURATION is refused audio_too_long, and a decode bomb (an hour of
// FLAC in a few kilobytes: far more than a second for every 16 bytes) audio_too_dense,
// over HTTP, each in seconds and leaving no file behind. media's TestUploadBombRefusedFast
// times the bombs of issue 22.
func TestUploadsTooLongOrTooDenseOverHTTP(t *testing.T) {
	requireMediaTools(t)
	dir := t.TempDir()
	speech, _ := os.ReadFile(testkit.Speech(t, dir, "speech.mp3", testkit.SampleSentence))
	bomb, _ := os.ReadFile(flacBomb(t, dir, 1))
	for _, c := range []struct {
		name, longest string // longest: STT_MAX_DURATION ("" = the default, 3 h)
		data          []byte
		code          string
	}{
		{"speech.mp3", "2s", speech, "audio_too_long"},
		{"bomb.flac", "", bomb, "audio_too_dense"},
	} {
		env := startFakeOpenAI(t).env()
		env["STT_MAX_DURATION"] = c.longest
		h := startApp(t, env)
		start := time.Now()
		r := h.upload(c.name, c.data)
		if r.status != 422 || codeOf(r) != c.code {
			t.Errorf("%s (%d bytes): %d %s, want 422 %s", c.name, len(c.data), r.status, r.body, c.code)
		}
		t.Logf("%s refused in %s", c.name, time.Since(start).Round(time.Millisecond))
		for _, sub := range []string{"uploads", "tmp"} {
			if left := dirFiles(t, filepath.Join(h.cfg.DataDir, sub)); len(left) != 0 {
				t.Errorf("a refused upload left %v", left)
			}
		}
	}
}

func TestUploadMeasuresAndPricesEveryFormat(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, startFakeOpenAI(t).env())
	dir := t.TempDir()
	for _, ext := range []string{"mp3", "wav", "m4a", "ogg", "webm", "flac"} {
		path := testkit.Speech(t, dir, "speech."+ext, testkit.SampleSentence)
		data, _ := os.ReadFile(path)
		r := h.upload("My Recording ."+ext, data)
		h.wantStatus(r, 200)
		var got struct {
			File     struct{ Filename, Path string }
			Duration int64
			Amount   int64
			Currency string
		}
		json.Unmarshal(r.body, &got)
		want := probeSeconds(t, data)
		if math.Abs(float64(got.Duration)-want) > 1 {
			t.Errorf("%s: duration %d s, ffprobe says %.2f s", ext, got.Duration, want)
		}
		if got.Amount != sttPrice(got.Duration) || got.Currency != "eur" {
			t.Errorf("%s: %d %s for %d s, want %d eur", ext, got.Amount, got.Currency, got.Duration, sttPrice(got.Duration))
		}
		if got.File.Filename != "My Recording ."+ext || len(got.File.Path) < 20 || strings.ContainsAny(got.File.Path, "/.") {
			t.Errorf("%s: file %+v: want the visitor's name and an opaque id", ext, got.File)
		}
	}
}

func TestAudioToTextEndToEnd(t *testing.T) {
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	h := startApp(t, openai.env())
	cfg := h.get("/api/config").json(t)
	if cfg["services"].(map[string]any)["sst"].(map[string]any)["open"] != true {
		t.Fatalf("audio-to-text closed: %v", cfg["services"])
	}
	data, _ := os.ReadFile(testkit.Speech(t, t.TempDir(), "talk.mp3", testkit.SampleSentence))
	up := h.upload("talk.mp3", data).json(t)
	id := up["file"].(map[string]any)["path"].(string)
	amount := int64(up["amount"].(float64))

	order := map[string]any{"filePath": id, "fileName": "talk.mp3", "response_format": "srt",
		"email": "listener@example.com", "emailVerify": "listener@example.com", "locale": "es", "language": "en"}
	stale := map[string]any{"order": order, "products": []map[string]any{{"price_data": map[string]any{"currency": "eur", "unit_amount": amount + 1}, "quantity": 1}}}
	h.wantStatus(h.postJSON("/payment/sst/create-checkout-session", stale), 409)

	r := h.postJSON("/payment/sst/create-checkout-session", map[string]any{"order": order})
	h.wantStatus(r, 200)
	co := r.json(t)
	if int64(co["amount"].(float64)) != amount {
		t.Errorf("checkout amount %v, upload said %d", co["amount"], amount)
	}
	sessionID, url := co["sessionId"].(string), co["url"].(string)
	h.wantStatus(h.postJSON("/services/sst", map[string]string{"sessionId": sessionID}), 402)
	pay := h.do("POST", url+"/pay", "", nil, nil)
	h.wantStatus(pay, 303)
	if want := h.cfg.PublicURL + "/sst-payment/success?session_id=" + sessionID; pay.header.Get("Location") != want {
		t.Errorf("pay redirects to %q, want %q", pay.header.Get("Location"), want)
	}
	link := h.waitForLinkOf("sst", sessionID, 30*time.Second)
	dl := h.get(link)
	h.wantStatus(dl, 200)
	if cd := dl.header.Get("Content-Disposition"); !regexp.MustCompile(`^attachment; filename="parla-transcript-[a-z0-9_-]{8}\.srt"$`).MatchString(cd) {
		t.Errorf("Content-Disposition = %q", cd)
	}
	if ct := dl.header.Get("Content-Type"); ct != "application/x-subrip" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !bytes.HasPrefix(dl.body, []byte("1\n00:00:00,000 --> ")) || !bytes.Contains(dl.body, []byte("Hello from Parla.")) {
		t.Errorf("not the SRT transcript:\n%s", dl.body)
	}
	reqs := openai.received()
	if len(reqs) != 1 || reqs[0].Model != "whisper-1" || reqs[0].Language != "en" {
		t.Errorf("the engine received %+v", reqs)
	}
	mails := dirFiles(t, filepath.Join(h.cfg.DataDir, "outbox"))
	if len(mails) != 1 {
		t.Fatalf("%d messages, want 1", len(mails))
	}
	if msg, _ := os.ReadFile(mails[0]); !bytes.Contains(msg, []byte(pageLink(link))) || bytes.Contains(msg, []byte(link)) {
		t.Errorf("the message lacks the page link, or gives the download link")
	}
	if left := dirFiles(t, filepath.Join(h.cfg.DataDir, "uploads")); len(left) != 0 {
		t.Errorf("upload kept after delivery: %v", left)
	}
	// A delivered upload cannot be ordered again.
	h.wantStatus(h.postJSON("/payment/sst/create-checkout-session", map[string]any{"order": order}), 404)
}

func TestBadUploadsGetClearErrorsAndLeaveNothing(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, startFakeOpenAI(t).env())
	dir := t.TempDir()
	mp3, _ := os.ReadFile(testkit.Speech(t, dir, "ok.mp3", testkit.SampleSentence))
	liar := testkit.Speech(t, dir, "liar.mp3", testkit.SampleSentence)
	testkit.ClaimFrames(t, liar, 400000)
	liarData, _ := os.ReadFile(liar)
	silent := filepath.Join(dir, "silent.mp4")
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "color=c=red:s=64x64:d=2", "-c:v", "libx264", "-preset", "ultrafast", silent)
	silentData, _ := os.ReadFile(silent)
	overLimit := make([]byte, 25<<20+1)
	copy(overLimit, mp3)
	hush := filepath.Join(dir, "hush.mp3") // 30 s of a quiet room: hiss at -46 dBFS
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "anoisesrc=color=white:amplitude=0.005:r=22050:d=30", "-c:a", "libmp3lame", hush)
	hushData, _ := os.ReadFile(hush)

	form := func(fields ...[3]string) (string, []byte) { return multipartBody(t, fields...) }
	cases := []struct {
		name   string
		ctype  string
		body   []byte
		status int
		code   string
	}{}
	add := func(name string, status int, code string, ctype string, body []byte) {
		cases = append(cases, struct {
			name   string
			ctype  string
			body   []byte
			status int
			code   string
		}{name, ctype, body, status, code})
	}
	fileForm := func(name string, data []byte) (string, []byte) { return form([3]string{"file", name, string(data)}) }
	ct, b := fileForm("notes.mp3", []byte("Shopping list: milk, eggs, bread.\n"))
	add("text named .mp3", 422, "unreadable_audio", ct, b)
	ct, b = fileForm("cut.mp3", mp3[:len(mp3)/2])
	add("truncated mp3", 422, "length_mismatch", ct, b) // its header says twice what it holds
	ct, b = fileForm("cut.mp3", mp3[:300])
	add("mp3 cut after 300 bytes", 422, "unreadable_audio", ct, b)
	ct, b = fileForm("empty.mp3", nil)
	add("empty file", 400, "empty_file", ct, b)
	ct, b = fileForm("silent.mp4", silentData)
	add("video without audio", 422, "not_audio", ct, b)
	ct, b = fileForm("hush.mp3", hushData)
	add("no speech, only hiss", 422, "no_speech", ct, b)
	ct, b = fileForm("liar.mp3", liarData)
	add("header claims hours", 422, "length_mismatch", ct, b)
	ct, b = fileForm("big.mp3", overLimit)
	add("one byte over the limit", 413, "file_too_large", ct, b)
	ct, b = form([3]string{"name", "", "talk.mp3"})
	add("no file field", 400, "no_file", ct, b)
	ct, b = form([3]string{"file", "a.mp3", string(mp3)}, [3]string{"file", "b.mp3", string(mp3)})
	add("second file field", 400, "too_many_files", ct, b)
	add("not multipart", 400, "invalid_upload", "application/json", []byte(`{"file":"x"}`))
	ct, b = fileForm("ok.mp3", mp3)
	add("body cut short", 400, "invalid_upload", ct, b[:len(b)-100])

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do("POST", "/services/sst/uploadaudio", c.ctype, c.body, nil)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			m := r.json(t)
			if m["ok"] != false || m["error"].(map[string]any)["code"] != c.code {
				t.Errorf("answer %s, want code %s", r.body, c.code)
			}
			for _, d := range []string{"uploads", "tmp"} {
				if left := dirFiles(t, filepath.Join(h.cfg.DataDir, d)); len(left) != 0 {
					t.Errorf("left on disk: %v", left)
				}
			}
		})
	}
	// Chunked, without a length: refused while streaming too.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		w, _ := mw.CreateFormFile("file", "big.mp3")
		chunk := make([]byte, 1<<20)
		for i := 0; i < 40; i++ {
			if _, err := w.Write(chunk); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		mw.Close()
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", h.base+"/services/sst/uploadaudio", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 413 || !bytes.Contains(body, []byte("file_too_large")) {
			t.Errorf("chunked 40 MB: %d %s", resp.StatusCode, body)
		}
	} // else: the server closed the connection while the client still sent, which is a refusal too
	if left := dirFiles(t, filepath.Join(h.cfg.DataDir, "tmp")); len(left) != 0 {
		t.Errorf("chunked upload left %v", left)
	}
	// A JSON endpoint does not swallow a huge chunked body either.
	big := io.MultiReader(strings.NewReader(`{"sessionId":"`), bytes.NewReader(make([]byte, 5<<20)))
	req, _ = http.NewRequest("POST", h.base+"/services/sst", big)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Errorf("5 MB chunked JSON: status %d, want 413", resp.StatusCode)
		}
	}
}

// videoServer serves generated media files by name and counts what it was asked.
type videoServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string]string
	hits  atomic.Int64
}

func startVideoServer(t testing.TB) *videoServer {
	v := &videoServer{files: map[string]string{}}
	v.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.hits.Add(1)
		v.mu.Lock()
		path, ok := v.files[r.URL.Path]
		v.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, path)
	}))
	t.Cleanup(v.Close)
	return v
}

func (v *videoServer) serve(name, path string) string {
	v.mu.Lock()
	v.files["/"+name] = path
	v.mu.Unlock()
	return v.URL + "/" + name
}

func vttOrder(link, format, email string) map[string]any {
	return map[string]any{"order": map[string]any{"selectedFile": link, "outputFormat": format,
		"email": email, "emailVerify": email, "locale": "ar"}}
}

func TestVideoToTextEndToEnd(t *testing.T) {
	requireMediaTools(t)
	env := startFakeOpenAI(t).env()
	env["ALLOW_PRIVATE_URLS"] = "1"
	h := startApp(t, env)
	videos := startVideoServer(t)
	clip := testkit.Speech(t, t.TempDir(), "clip.mp4", testkit.SampleSentence+" "+testkit.SampleSentence)
	link := videos.serve("talk.mp4", clip)

	r := h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": link})
	h.wantStatus(r, 200)
	a := r.json(t)
	secs := int64(a["duration"].(float64))
	want := probeSeconds(t, mustRead(t, clip))
	if math.Abs(float64(secs)-want) > 1 || int64(a["durationMinutes"].(float64)) != secs/60 ||
		int64(a["durationSeconds"].(float64)) != secs%60 || math.Abs(a["totalMinutes"].(float64)-float64(secs)/60) > 1e-9 {
		t.Errorf("analysis %v; ffprobe says %.2f s", a, want)
	}
	if int64(a["amount"].(float64)) != vttPrice(secs) {
		t.Errorf("amount %v, want %d", a["amount"], vttPrice(secs))
	}
	r = h.postJSON("/payment/vtt/create-checkout-session", vttOrder(link, "vtt", "viewer@example.com"))
	h.wantStatus(r, 200)
	co := r.json(t)
	sessionID := co["sessionId"].(string)
	pay := h.do("POST", co["url"].(string)+"/pay", "", nil, nil)
	h.wantStatus(pay, 303)
	if !strings.HasSuffix(pay.header.Get("Location"), "/vtt-payment/success?session_id="+sessionID) {
		t.Errorf("pay redirects to %q", pay.header.Get("Location"))
	}
	dl := h.get(h.waitForLinkOf("vtt", sessionID, 30*time.Second))
	h.wantStatus(dl, 200)
	if ct := dl.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/vtt") {
		t.Errorf("Content-Type = %q", ct)
	}
	if !bytes.HasPrefix(dl.body, []byte("WEBVTT")) || !bytes.Contains(dl.body, []byte("Hello from Parla.")) {
		t.Errorf("not the WebVTT transcript:\n%s", dl.body)
	}
	if n := len(dirFiles(t, filepath.Join(h.cfg.DataDir, "outbox"))); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
	if left := dirFiles(t, filepath.Join(h.cfg.DataDir, "tmp")); len(left) != 0 {
		t.Errorf("temporary media kept: %v", left)
	}
}

// TestSpeechCheckAndTranslationEndToEnd: an upload's answer says how much of it is speech
// (silence taken out); a video whose sound track is silent is refused at analysis and at
// checkout; an order for an English translation is delivered as one and said to be.
func TestSpeechCheckAndTranslationEndToEnd(t *testing.T) {
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	env := openai.env()
	env["ALLOW_PRIVATE_URLS"] = "1"
	h := startApp(t, env)
	dir := t.TempDir()
	ffmpeg := testkit.Binary(t, "ffmpeg")
	speech := testkit.Speech(t, dir, "speech.wav", testkit.SampleSentence)
	spoken := probeSeconds(t, mustRead(t, speech))
	padded := filepath.Join(dir, "padded.mp3") // the sentence, then 40 s of silence
	testkit.Run(t, ffmpeg, "-nostdin", "-loglevel", "error", "-i", speech, "-af", "apad=pad_dur=40", padded)

	up := h.upload("padded.mp3", mustRead(t, padded))
	h.wantStatus(up, 200)
	a := up.json(t)
	duration, speechSecs := a["duration"].(float64), a["speechSeconds"].(float64)
	if math.Abs(duration-(spoken+40)) > 1.5 || speechSecs < spoken-1.5 || speechSecs > spoken+1 {
		t.Errorf("upload answer %s; the sentence lasts %.2f s, then 40 s of silence", up.body, spoken)
	}

	mute := filepath.Join(dir, "mute.mp4")
	testkit.Run(t, ffmpeg, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=blue:s=160x120:r=10",
		"-f", "lavfi", "-i", "anullsrc=r=44100:cl=mono", "-t", "6", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", mute)
	videos := startVideoServer(t)
	link := videos.serve("mute.mp4", mute)
	r := h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": link})
	if r.status != 422 || codeOf(r) != "no_speech" {
		t.Errorf("analysing a mute video: %d %s", r.status, r.body)
	}
	r = h.postJSON("/payment/vtt/create-checkout-session", vttOrder(link, "srt", "viewer@example.com"))
	if r.status != 422 || codeOf(r) != "no_speech" {
		t.Errorf("ordering a mute video: %d %s", r.status, r.body)
	}
	talk := videos.serve("talk.mp4", testkit.Speech(t, dir, "talk.mp4", testkit.SampleSentence))
	r = h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": talk})
	h.wantStatus(r, 200)
	if v := r.json(t); v["speechSeconds"] == nil || v["speechSeconds"].(float64) < v["duration"].(float64)-1 {
		t.Errorf("analysis of a spoken video: %s", r.body)
	}

	order := map[string]any{"filePath": a["file"].(map[string]any)["path"], "fileName": "padded.mp3", "response_format": "text",
		"email": "listener@example.com", "emailVerify": "listener@example.com", "locale": "en", "translate": true}
	r = h.postJSON("/payment/sst/create-checkout-session", map[string]any{"order": order})
	h.wantStatus(r, 200)
	co := r.json(t)
	sessionID := co["sessionId"].(string)
	h.wantStatus(h.do("POST", co["url"].(string)+"/pay", "", nil, nil), 303)
	dl := h.get(h.waitForLinkOf("sst", sessionID, 30*time.Second))
	h.wantStatus(dl, 200)
	if cd := dl.header.Get("Content-Disposition"); !strings.Contains(cd, `filename="parla-translation-`) {
		t.Errorf("Content-Disposition = %q", cd)
	}
	if !bytes.Contains(dl.body, []byte("This clip was translated.")) {
		t.Errorf("not the engine's translation: %q", dl.body)
	}
	if reqs := openai.received(); len(reqs) != 1 || reqs[0].Endpoint != "translations" {
		t.Errorf("the engine received %+v, want one translations request", reqs)
	}
	view := h.get("/payment/sst/checkout-session?sessionId=" + sessionID).json(t)
	if view["order"].(map[string]any)["translate"] != true {
		t.Errorf("session lookup: %v", view["order"])
	}
	mails := dirFiles(t, filepath.Join(h.cfg.DataDir, "outbox"))
	if len(mails) != 1 {
		t.Fatalf("%d messages", len(mails))
	}
	if msg := mustRead(t, mails[0]); !bytes.Contains(msg, []byte("English translation")) {
		t.Errorf("the letter does not say it delivers an English translation:\n%s", msg)
	}
}

func mustRead(t testing.TB, path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestVideoThatChangedAfterPaymentIsRefunded(t *testing.T) {
	requireMediaTools(t)
	env := startFakeOpenAI(t).env()
	env["ALLOW_PRIVATE_URLS"] = "1"
	h := startApp(t, env)
	videos := startVideoServer(t)
	dir := t.TempDir()
	short := testkit.Speech(t, dir, "short.mp4", "Short.")
	long := testkit.Speech(t, dir, "long.mp4", testkit.SampleSentence+" "+testkit.SampleSentence)
	link := videos.serve("v.mp4", short)
	r := h.postJSON("/payment/vtt/create-checkout-session", vttOrder(link, "text", "viewer@example.com"))
	h.wantStatus(r, 200)
	co := r.json(t)
	videos.serve("v.mp4", long) // the owner replaced the video before it was fetched
	h.wantStatus(h.do("POST", co["url"].(string)+"/pay", "", nil, nil), 303)
	if !testkit.WaitFor(30*time.Second, func() bool {
		r = h.postJSON("/services/vtt", map[string]string{"sessionId": co["sessionId"].(string)})
		if r.status == 410 {
			o := r.json(t)["order"].(map[string]any)
			if o["error"] != "source_changed" {
				t.Fatalf("failed with %v, want source_changed", o)
			}
			if o["status"] == "refunded" {
				// The page says how much was refunded: the order's own price.
				if o["amount"] != float64(co["amount"].(float64)) || o["currency"] != "eur" {
					t.Errorf("refunded order's amount %v %v, want %v eur", o["amount"], o["currency"], co["amount"])
				}
				return true
			}
		}
		if r.status != 202 && r.status != 410 {
			t.Fatalf("result: %d %s", r.status, r.body)
		}
		return false
	}) {
		t.Fatalf("result: %d %s", r.status, r.body)
	}
	lookup := h.get("/payment/vtt/checkout-session?sessionId=" + co["sessionId"].(string)).json(t)
	if ok, err := h.app.test.RefundedIntent(context.Background(), lookup["payment_intent"].(string)); err != nil || !ok {
		t.Errorf("no refund recorded at the checkout: %v %v", ok, err)
	}
}

func TestVideoLinksCannotReachPrivateAddresses(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, startFakeOpenAI(t).env()) // no ALLOW_PRIVATE_URLS
	videos := startVideoServer(t)
	link := videos.serve("clip.mp4", testkit.Speech(t, t.TempDir(), "clip.mp4", "Hi."))
	for _, c := range []struct{ link, code string }{
		{link, "forbidden_address"},
		{strings.Replace(link, "127.0.0.1", "localhost", 1), "forbidden_address"},
		{"http://169.254.169.254/latest/meta-data/", "forbidden_address"},
		{"file:///etc/passwd", "unsupported_link"},
		{"gopher://127.0.0.1:70/", "unsupported_link"},
		{"not a link", "unsupported_link"},
		{"", "empty_link"},
	} {
		r := h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": c.link})
		if r.status != 400 || !bytes.Contains(r.body, []byte(`"code":"`+c.code+`"`)) {
			t.Errorf("%q: %d %s, want 400 %s", c.link, r.status, r.body, c.code)
		}
		h.wantStatus(h.postJSON("/payment/vtt/create-checkout-session", vttOrder(c.link, "json", "a@example.com")), 400)
	}
	if n := videos.hits.Load(); n != 0 {
		t.Errorf("the private server was reached %d times", n)
	}
	r := h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": videos.serve("missing", "/nonexistent")})
	if r.status != 400 {
		t.Errorf("a private link that would 404: %d %s", r.status, r.body)
	}
}

// Without an engine (the default build has no whisper.cpp and no model), audio- and
// video-to-text say so and take no orders, uploads or analyses.
func TestTranscriptionClosedWithoutAnEngine(t *testing.T) {
	h := startApp(t, nil)
	services := h.get("/api/config").json(t)["services"].(map[string]any)
	for _, svc := range []string{"sst", "vtt"} {
		if s := services[svc].(map[string]any); s["open"] != false || s["reason"] != "engine_unavailable" {
			t.Errorf("%s: %v, want closed", svc, s)
		}
	}
	ctype, body := multipartBody(t, [3]string{"file", "a.mp3", "ID3"})
	for _, r := range []reply{
		h.do("POST", "/services/sst/uploadaudio", ctype, body, nil),
		h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": "https://example.com/a.mp4"}),
		h.postJSON("/payment/sst/create-checkout-session", map[string]any{"order": map[string]any{"filePath": "x",
			"response_format": "json", "email": "a@example.com", "emailVerify": "a@example.com"}}),
		h.postJSON("/payment/vtt/create-checkout-session", vttOrder("https://example.com/a.mp4", "json", "a@example.com")),
	} {
		if r.status != 503 || !bytes.Contains(r.body, []byte("service_unavailable")) {
			t.Errorf("%d %s, want 503 service_unavailable", r.status, r.body)
		}
	}
	if left := dirFiles(t, filepath.Join(h.cfg.DataDir, "tmp")); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}
