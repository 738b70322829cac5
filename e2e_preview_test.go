package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parla/providers/testkit"
)

// spokenFile writes about seconds of speech (the sample sentence, again and again) to
// dir/name: an mp3, or for .mp4 a faststart MP4 with a moving picture (its bytes mostly
// video, as a phone's are).
func spokenFile(t testing.TB, dir, name string, seconds int) string {
	t.Helper()
	sentence := testkit.Speech(t, dir, "sentence.wav", testkit.SampleSentence)
	out := filepath.Join(dir, name)
	args := []string{"-nostdin", "-loglevel", "error", "-y", "-stream_loop", "-1", "-i", sentence}
	if strings.HasSuffix(name, ".mp4") {
		args = append(args, "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-map", "1:v", "-map", "0:a",
			"-c:v", "libx264", "-preset", "ultrafast", "-b:v", "400k", "-c:a", "aac", "-movflags", "+faststart")
	}
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), append(args, "-t", strconv.Itoa(seconds), out)...)
	return out
}

// preview asks for a preview as the page does, from the client address from (sent as
// X-Forwarded-For through a trusted proxy), until it is no longer 202, and says how long
// the answer took.
func (h *harness) preview(path string, body map[string]string, from string) (reply, time.Duration) {
	h.t.Helper()
	b, _ := json.Marshal(body)
	start := time.Now()
	for {
		r := h.do("POST", path, "application/json", b, map[string]string{"X-Forwarded-For": from})
		if r.status != http.StatusAccepted || time.Since(start) > 3*time.Minute {
			return r, time.Since(start)
		}
		if r.header.Get("Retry-After") != "1" || r.json(h.t)["pending"] != true {
			h.t.Fatalf("202 without Retry-After: 1 and pending: %s", r.body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// previewData is a 200 preview's data.
func previewData(t testing.TB, r reply) map[string]any {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("preview: %d %s", r.status, r.body)
	}
	return r.json(t)["data"].(map[string]any)
}

func TestUploadPreviewOverHTTP(t *testing.T) {
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	const engineTime = 1500 * time.Millisecond
	openai.delay.Store(int64(engineTime))
	env := openai.env()
	env["TRUSTED_PROXIES"] = "127.0.0.1"
	env["PREVIEW_SECONDS_PER_HOUR"] = "75"
	h := startApp(t, env)
	dir := t.TempDir()
	talk := mustRead(t, spokenFile(t, dir, "talk.mp3", 180))
	uploadFrom := func(from string) string {
		ctype, body := multipartBody(t, [3]string{"file", "talk.mp3", string(talk)})
		r := h.do("POST", "/services/sst/uploadaudio", ctype, body, map[string]string{"X-Forwarded-For": from})
		h.wantStatus(r, 200)
		return r.json(t)["file"].(map[string]any)["path"].(string)
	}
	const visitor, neighbour, stranger = "2001:db8:1:2::a", "2001:db8:1:2:ffff::b", "2001:db8:1:3::a"
	id := uploadFrom(visitor)

	r, took := h.preview("/services/sst/preview", map[string]string{"filePath": id}, visitor)
	p := previewData(t, r)
	if p["text"] != "Hello from Parla. This clip was transcribed." || p["language"] != "en" || p["seconds"] != 30.0 || p["speech"] != true {
		t.Errorf("preview %s", r.body)
	}
	reqs := openai.received()
	if len(reqs) != 1 || reqs[0].Seconds > 31 || reqs[0].Seconds < 29 || reqs[0].Language != "" {
		t.Fatalf("the engine received %+v, want one request of at most 31 s (of the 180 s file) with no language", reqs)
	}
	// The answer comes with the engine's; a generous bound here (the benchmark measures it).
	t.Logf("preview answered in %v with an engine taking %v", took, engineTime)
	if took > engineTime+30*time.Second {
		t.Errorf("the preview took %v", took)
	}

	// Asked again: the first answer, at once, and the engine not asked.
	again, _ := h.preview("/services/sst/preview", map[string]string{"filePath": id}, visitor)
	if string(again.body) != string(r.body) || len(openai.received()) != 1 {
		t.Errorf("asked again: %s, %d engine requests", again.body, len(openai.received()))
	}
	// Another language: heard again, in it; the order carries it.
	r, _ = h.preview("/services/sst/preview", map[string]string{"filePath": id, "language": "fr"}, visitor)
	if p := previewData(t, r); p["language"] != "en" && p["language"] != "fr" {
		t.Errorf("preview in fr: %s", r.body)
	}
	if reqs := openai.received(); len(reqs) != 2 || reqs[1].Language != "fr" || reqs[1].Seconds > 31 {
		t.Errorf("the engine received %+v, want a second request in fr", reqs)
	}
	bad, _ := h.preview("/services/sst/preview", map[string]string{"filePath": id, "language": "klingon"}, visitor)
	if bad.status != 400 || codeOf(bad) != "invalid_language" {
		t.Errorf("language klingon: %d %s", bad.status, bad.body)
	}

	// 30 + 30 s of the 75 an hour heard; another 30 is refused to the whole /64.
	r, _ = h.preview("/services/sst/preview", map[string]string{"filePath": uploadFrom(neighbour)}, neighbour)
	wait, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 429 || codeOf(r) != "preview_budget_spent" || wait < 3000 || wait > 3600 {
		t.Errorf("past the budget, from the same /64: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	r, _ = h.preview("/services/sst/preview", map[string]string{"filePath": uploadFrom(stranger)}, stranger)
	if previewData(t, r)["speech"] != true {
		t.Errorf("another /64: %s", r.body)
	}
	if n := len(openai.received()); n != 3 {
		t.Errorf("%d engine requests, want 3", n)
	}
	for _, body := range []map[string]string{{"filePath": "nope"}, {"filePath": ""}} {
		r, _ := h.preview("/services/sst/preview", body, stranger)
		if r.status != 404 || codeOf(r) != "upload_not_found" {
			t.Errorf("preview of %v: %d %s", body, r.status, r.body)
		}
	}
	if r := h.postJSON("/services/sst/preview", "not an object"); r.status != 400 {
		t.Errorf("a body that is no object: %d %s", r.status, r.body)
	}
}

// startLinkApp starts the app on the OpenAI-compatible stand-in, its video links allowed to
// reach this machine's test servers.
func startLinkApp(t *testing.T, settings ...string) (*harness, *fakeOpenAI) {
	t.Helper()
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	env := openai.env()
	env["ALLOW_PRIVATE_URLS"] = "1"
	for i := 0; i+1 < len(settings); i += 2 {
		env[settings[i]] = settings[i+1]
	}
	return startApp(t, env), openai
}

// countingServer serves files with byte ranges (http.ServeContent) and counts the body
// bytes it sent; hang makes every request wait until the client leaves.
type countingServer struct {
	*videoServer
	sent atomic.Int64
	hang atomic.Bool
}

func startCountingServer(t testing.TB) *countingServer {
	c := &countingServer{videoServer: &videoServer{files: map[string]string{}}}
	c.videoServer.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.hang.Load() {
			<-r.Context().Done()
			return
		}
		c.mu.Lock()
		path, ok := c.files[r.URL.Path]
		c.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(countingWriter{w, &c.sent}, r, path)
	}))
	t.Cleanup(c.Close)
	return c
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

func TestLinkPreviewReadsOnlyItsStart(t *testing.T) {
	h, openai := startLinkApp(t)
	dir := t.TempDir()
	video := spokenFile(t, dir, "talk.mp4", 180)
	size := int64(len(mustRead(t, video)))
	src := startCountingServer(t)
	link := src.serve("talk.mp4", video)
	h.wantStatus(h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": link}), 200)

	src.sent.Store(0) // the analysis may read the whole file to measure its speech
	r, _ := h.preview("/services/vtt/preview", map[string]string{"video": link}, "192.0.2.7")
	p := previewData(t, r)
	if p["speech"] != true || !strings.HasPrefix(p["text"].(string), "Hello from Parla.") || p["seconds"] != 30.0 {
		t.Errorf("link preview: %s", r.body)
	}
	read := src.sent.Load()
	t.Logf("the preview read %d of the file's %d bytes (%.0f %%)", read, size, 100*float64(read)/float64(size))
	if read <= 0 || read >= size/2 {
		t.Errorf("the preview read %d bytes of a %d-byte faststart MP4, want well under half", read, size)
	}
	if reqs := openai.received(); len(reqs) != 1 || reqs[0].Seconds > 31 {
		t.Errorf("the engine received %+v, want one request of at most 31 s", reqs)
	}
}

// A link that hangs once analysed does not hold the preview slot past its deadline: its
// preview fails, and the next visitor's preview is made.
func TestAHangingLinkGivesThePreviewSlotBack(t *testing.T) {
	h, openai := startLinkApp(t)
	dir := t.TempDir()
	src := startCountingServer(t)
	link := src.serve("talk.mp4", spokenFile(t, dir, "talk.mp4", 40))
	h.wantStatus(h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": link}), 200)
	src.hang.Store(true)
	r, took := h.preview("/services/vtt/preview", map[string]string{"video": link}, "192.0.2.7")
	if r.status < 400 {
		t.Errorf("a hanging link's preview: %d %s", r.status, r.body)
	}
	// The analysis' 15 s, its 5 s for a first byte, and room for a busy machine.
	t.Logf("a hanging link's preview ended in %v: %d %s", took, r.status, r.body)
	if took > 90*time.Second {
		t.Errorf("a hanging link held its preview %v", took)
	}
	up := h.upload("talk.mp3", mustRead(t, spokenFile(t, dir, "talk.mp3", 40)))
	h.wantStatus(up, 200)
	id := up.json(t)["file"].(map[string]any)["path"].(string)
	r, _ = h.preview("/services/sst/preview", map[string]string{"filePath": id}, "192.0.2.8")
	if previewData(t, r)["speech"] != true {
		t.Errorf("the next preview: %s", r.body)
	}
	if n := len(openai.received()); n != 1 {
		t.Errorf("the engine was asked %d times, want once (the upload's)", n)
	}
}

// A lying or broken link is refused by its preview as its analysis refuses it.
func TestLyingLinksAreRefusedByTheirPreviewAsByTheirAnalysis(t *testing.T) {
	h, openai := startLinkApp(t, "PREVIEW_SECONDS_PER_HOUR", "0") // thirteen links from one address
	videos := startVideoServer(t)
	junk := filepath.Join(t.TempDir(), "notes.mp4")
	if err := os.WriteFile(junk, []byte(strings.Repeat("These are notes, not a video.\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := append(testkit.LyingMedia(t, t.TempDir()), testkit.LyingMediaCase{Name: "junk", Path: junk})
	for _, c := range cases {
		link := videos.serve(c.Name+filepath.Ext(c.Path), c.Path)
		analysis := h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": link})
		r, _ := h.preview("/services/vtt/preview", map[string]string{"video": link}, "192.0.2.9")
		if analysis.status != 200 && (r.status != analysis.status || codeOf(r) != codeOf(analysis)) {
			t.Errorf("%s: analysis %d %s, preview %d %s", c.Name, analysis.status, codeOf(analysis), r.status, codeOf(r))
		}
		if analysis.status == 200 && r.status != 200 {
			t.Errorf("%s: analysed, but its preview: %d %s", c.Name, r.status, r.body)
		}
	}
	for _, req := range openai.received() {
		if req.Seconds > 31 {
			t.Errorf("the engine heard %.1f s of a lying link", req.Seconds)
		}
	}
}

func TestPreviewsOffByPreviewEngines(t *testing.T) {
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	env := openai.env()
	env["PREVIEW_ENGINES"] = "whisper" // the engine is OpenAI-compatible: it costs the operator
	h := startApp(t, env)
	up := h.upload("talk.mp3", mustRead(t, testkit.Speech(t, t.TempDir(), "talk.mp3", testkit.SampleSentence)))
	h.wantStatus(up, 200)
	r := h.postJSON("/services/sst/preview", map[string]string{"filePath": up.json(t)["file"].(map[string]any)["path"].(string)})
	if r.status != 503 || codeOf(r) != "preview_unavailable" {
		t.Errorf("preview with PREVIEW_ENGINES=whisper and openai: %d %s", r.status, r.body)
	}
	if cfg := h.get("/api/config").json(t)["preview"].(map[string]any); cfg["enabled"] != false {
		t.Errorf("/api/config preview = %v", cfg)
	}
	if n := len(openai.received()); n != 0 {
		t.Errorf("the engine was asked %d times", n)
	}
}

// A link's preview may analyse the link again: it counts in the analyses' bucket, so it is
// no way around RATE_LIMIT.
func TestLinkPreviewsShareTheAnalysesBucket(t *testing.T) {
	openai := startFakeOpenAI(t)
	env := openai.env()
	env["ALLOW_PRIVATE_URLS"], env["RATE_LIMIT"] = "1", "3"
	h := startApp(t, env)
	link := startVideoServer(t).URL + "/missing.mp4"
	for i, path := range []string{"/services/vtt/analyzevideo", "/services/vtt/preview", "/services/vtt/preview", "/services/vtt/preview"} {
		r := h.postJSON(path, map[string]string{"video": link})
		want := "source_unreachable"
		if i == 3 {
			want = "rate_limited"
		}
		if codeOf(r) != want {
			t.Errorf("request %d (%s): %d %s, want %s", i+1, path, r.status, r.body, want)
		}
	}
}

// An engine that fails the preview: preview_failed, told for a while without asking the
// engine again, and the visitor's seconds given back.
func TestAPreviewTheEngineFailsIsPreviewFailed(t *testing.T) {
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	env := openai.env()
	env["PREVIEW_SECONDS_PER_HOUR"] = "40" // one 30 s preview, if the failed one is given back
	h := startApp(t, env)
	dir := t.TempDir()
	upload := func(name string) string {
		up := h.upload(name, mustRead(t, spokenFile(t, dir, name, 35)))
		h.wantStatus(up, 200)
		return up.json(t)["file"].(map[string]any)["path"].(string)
	}
	id := upload("talk.mp3")
	openai.refuse.Store(true)
	for range 2 {
		r, _ := h.preview("/services/sst/preview", map[string]string{"filePath": id}, "192.0.2.10")
		if r.status != 502 || codeOf(r) != "preview_failed" {
			t.Errorf("the engine refusing: %d %s", r.status, r.body)
		}
	}
	if n := len(openai.received()); n != 1 {
		t.Errorf("the engine was asked %d times, want once: the failure is told again without it", n)
	}
	openai.refuse.Store(false)
	r, _ := h.preview("/services/sst/preview", map[string]string{"filePath": upload("other.mp3")}, "192.0.2.10")
	if previewData(t, r)["speech"] != true {
		t.Errorf("after the failure was given back: %s", r.body)
	}
}
