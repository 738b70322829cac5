package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"parla/api/health"
	"parla/api/orders"
	"parla/providers"
	"parla/providers/testkit"
	"parla/providers/whisper"
)

const testAdminToken = "metrics-token-0123456789abcdef-0123456789"

// scrapeMetrics reads a /metrics answer with Prometheus' own text parser.
func scrapeMetrics(t testing.TB, r reply) map[string]*dto.MetricFamily {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("/metrics answered %d: %s", r.status, r.body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// series finds the value of family's series having (at least) these labels: a counter's or
// gauge's value, a histogram's count. ok is false when there is none.
func series(families map[string]*dto.MetricFamily, family string, labels map[string]string) (v float64, ok bool) {
next:
	for _, m := range families[family].GetMetric() {
		for _, l := range m.GetLabel() {
			if want, named := labels[l.GetName()]; named && want != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Histogram != nil:
			v += float64(m.Histogram.GetSampleCount())
		}
		ok = true
	}
	return v, ok
}

// TestMetricsAfterOnePaidOrderPerService: one order of each service is paid and delivered;
// /metrics (behind the token) then counts each in the order, money, work, e-mail, upload,
// link and HTTP series, and no label carries an address, a token, an id or a file name.
func TestMetricsAfterOnePaidOrderPerService(t *testing.T) {
	requireMediaTools(t)
	env := startFakeOpenAI(t).env()
	env["ALLOW_PRIVATE_URLS"] = "1"
	env["ADMIN_TOKEN"] = testAdminToken
	h := startApp(t, env)

	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong-token-0123456789abcdef-0123456789"},
		{"Authorization": testAdminToken}, {"Authorization": "Basic " + testAdminToken}} {
		r := h.do("GET", "/metrics", "", nil, hdr)
		h.wantStatus(r, 401)
		if !bytes.Contains(r.body, []byte(`"unauthorized"`)) || bytes.Contains(r.body, []byte("parla_")) {
			t.Errorf("refusal with %v: %s", hdr, r.body)
		}
	}

	secret := []string{testAdminToken} // nothing of these may appear in a label
	paid := map[string]int64{}

	// Text-to-speech.
	sessionID, url := h.checkout(ttsOrder("Metrics count this order.", "nova", "mp3", 1, "speaker@example.com", "en"))
	h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
	link := h.waitForLink(sessionID, 30*time.Second)
	secret = append(secret, sessionID, "speaker@example.com", filepath.Base(link))
	paid["tts"] = 99

	// Audio-to-text.
	data, _ := os.ReadFile(testkit.Speech(t, t.TempDir(), "private-name.mp3", testkit.SampleSentence))
	up := h.upload("private-name.mp3", data).json(t)
	uploadID := up["file"].(map[string]any)["path"].(string)
	paid["sst"] = int64(up["amount"].(float64))
	r := h.postJSON("/payment/sst/create-checkout-session", map[string]any{"order": map[string]any{
		"filePath": uploadID, "fileName": "private-name.mp3", "response_format": "srt",
		"email": "listener@example.com", "emailVerify": "listener@example.com", "locale": "es", "language": "en"}})
	h.wantStatus(r, 200)
	co := r.json(t)
	h.wantStatus(h.do("POST", co["url"].(string)+"/pay", "", nil, nil), 303)
	link = h.waitForLinkOf("sst", co["sessionId"].(string), 30*time.Second)
	secret = append(secret, co["sessionId"].(string), uploadID, "private-name", "listener@example.com", filepath.Base(link))

	// Video-to-text.
	videos := startVideoServer(t)
	clip := testkit.Speech(t, t.TempDir(), "clip.mp4", testkit.SampleSentence+" "+testkit.SampleSentence)
	videoLink := videos.serve("secret-video.mp4", clip)
	h.wantStatus(h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": videoLink}), 200)
	r = h.postJSON("/payment/vtt/create-checkout-session", vttOrder(videoLink, "vtt", "viewer@example.com"))
	h.wantStatus(r, 200)
	co = r.json(t)
	paid["vtt"] = int64(co["amount"].(float64))
	h.wantStatus(h.do("POST", co["url"].(string)+"/pay", "", nil, nil), 303)
	link = h.waitForLinkOf("vtt", co["sessionId"].(string), 30*time.Second)
	secret = append(secret, co["sessionId"].(string), "secret-video", "viewer@example.com", filepath.Base(link))

	// The job's last steps (e-mail, done) are recorded just after the link appears.
	// Past the wait, the checks below say which series is short.
	var f map[string]*dto.MetricFamily
	testkit.WaitFor(10*time.Second, func() bool {
		f = scrapeMetrics(t, h.do("GET", "/metrics", "", nil, map[string]string{"Authorization": "Bearer " + testAdminToken}))
		n, _ := series(f, "parla_orders_total", map[string]string{"state": "delivered"})
		return n == 3
	})
	engines := map[string]string{"tts": "espeak", "sst": "openai", "vtt": "openai"}
	for svc, amount := range paid {
		for _, c := range []struct {
			family string
			labels map[string]string
			want   float64
		}{
			{"parla_orders_total", map[string]string{"service": svc, "state": "created"}, 1},
			{"parla_orders_total", map[string]string{"service": svc, "state": "paid"}, 1},
			{"parla_orders_total", map[string]string{"service": svc, "state": "delivered"}, 1},
			{"parla_orders_total", map[string]string{"service": svc, "state": "refunded"}, 0},
			{"parla_revenue_cents_total", map[string]string{"service": svc, "currency": "eur"}, float64(amount)},
			{"parla_job_duration_seconds", map[string]string{"service": svc, "engine": engines[svc], "outcome": "ok"}, 1},
			{"parla_engine_speed_ratio", map[string]string{"service": svc, "engine": engines[svc]}, 1},
			{"parla_orders_open", map[string]string{"service": svc}, 0},
		} {
			if got, ok := series(f, c.family, c.labels); !ok || got != c.want {
				t.Errorf("%s%v = %v (found: %v), want %v", c.family, c.labels, got, ok, c.want)
			}
		}
		if audio, _ := series(f, "parla_engine_audio_seconds_total", map[string]string{"service": svc}); audio < 1 {
			t.Errorf("%s: %v s of audio counted", svc, audio)
		}
	}
	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"parla_emails_sent_total", map[string]string{"kind": "delivered"}, 3},
		{"parla_emails_failed_total", nil, 0},
		{"parla_uploads_total", nil, 1},
		{"parla_upload_bytes_total", nil, float64(len(data))},
		{"parla_http_requests_total", map[string]string{"route": "/services/sst/uploadaudio", "method": "POST", "status": "200"}, 1},
		{"parla_http_requests_total", map[string]string{"route": "/metrics", "status": "401"}, 4},
		{"parla_http_requests_total", map[string]string{"route": "/payment/tts/create-checkout-session", "method": "POST", "status": "200"}, 1},
		{"parla_data_dir_free_bytes", nil, -1},
		{"parla_queue_jobs", map[string]string{"state": "available"}, -1},
		{"parla_queue_oldest_waiting_seconds", nil, -1},
		{"parla_job_timeout_seconds", nil, 7200},
		{"parla_build_info", map[string]string{"version": Version}, 1},
	} {
		got, ok := series(f, c.family, c.labels)
		if !ok || (c.want >= 0 && got != c.want) {
			t.Errorf("%s%v = %v (found: %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	if n, _ := series(f, "parla_link_bytes_total", nil); n < float64(len(mustRead(t, clip))) {
		t.Errorf("%v bytes read from the video link; the file has %d and is fetched whole after payment", n, len(mustRead(t, clip)))
	}
	if n, _ := series(f, "parla_http_requests_total", map[string]string{"route": "/services/:service", "method": "POST"}); n < 3 {
		t.Errorf("%v result polls counted under /services/:service", n)
	}
	for name, mf := range f {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				v := l.GetValue()
				for _, s := range secret {
					if s != "" && strings.Contains(v, s) {
						t.Errorf("%s carries %s=%q (%q)", name, l.GetName(), v, s)
					}
				}
				if strings.ContainsAny(v, "@?") || strings.HasPrefix(v, "/d/") && v != "/d/:token" {
					t.Errorf("%s carries %s=%q", name, l.GetName(), v)
				}
			}
		}
	}
}

// With METRICS_ADDR the metrics are served there without a token, and not on ADDR.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	addr := testkit.FreePort(t)
	h := startApp(t, map[string]string{"METRICS_ADDR": addr, "ADMIN_TOKEN": testAdminToken})
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	res.Body.Close()
	f := scrapeMetrics(t, reply{status: res.StatusCode, body: buf.Bytes()})
	if _, ok := series(f, "parla_orders_total", map[string]string{"service": "tts", "state": "paid"}); !ok {
		t.Errorf("no parla_orders_total on METRICS_ADDR")
	}
	h.wantStatus(h.do("GET", "/metrics", "", nil, map[string]string{"Authorization": "Bearer " + testAdminToken}), 404)
}

// /readyz: ready on a healthy node, with audio- and video-to-text closed by configuration
// (no engine set up); a broken storage directory, too little free disk, or an engine the
// configuration asks for that is missing make it 503 naming the check, and `parla
// healthcheck` exits 1 saying which.
func TestReadyz(t *testing.T) {
	noWhisper := filepath.Join(t.TempDir(), "no-model.bin")
	h := startApp(t, map[string]string{"WHISPER_MODEL": noWhisper, "ADMIN_TOKEN": testAdminToken})
	ready := func(h *harness, status int) map[string]any {
		t.Helper()
		r := h.get("/readyz")
		h.wantStatus(r, status)
		return r.json(t)
	}
	check := func(body map[string]any, name string) string {
		c, _ := body["checks"].(map[string]any)[name].(map[string]any)
		s, _ := c["status"].(string)
		return s
	}
	hc := func(h *harness) (int, string) {
		var stderr bytes.Buffer
		code := healthcheck(func(k string) string {
			switch k {
			case "ADDR":
				return strings.TrimPrefix(h.base, "http://")
			case "ADMIN_TOKEN":
				return h.cfg.AdminToken
			}
			return ""
		}, &stderr)
		return code, stderr.String()
	}

	body := ready(h, 200)
	for name, want := range map[string]string{"database": "ok", "storage": "ok", "disk": "ok", "engine.tts": "ok",
		"engine.sst": "closed", "engine.vtt": "closed"} {
		if got := check(body, name); got != want {
			t.Errorf("%s = %q, want %q (%v)", name, got, want, body)
		}
	}
	if body["ok"] != true {
		t.Errorf("/readyz = %v", body)
	}
	if code, msg := hc(h); code != 0 {
		t.Errorf("healthcheck on a ready node: exit %d: %s", code, msg)
	}

	// The storage directory can no longer take a file.
	tmp := filepath.Join(h.cfg.DataDir, "files", ".tmp")
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The last report is answered again for readyMaxAge: then the checks run anew.
	testkit.Eventually(t, 5*readyMaxAge, func() bool { return h.get("/readyz").status == 503 }, "/readyz to see the broken storage")
	body = ready(h, 503)
	if check(body, "storage") != "failed" || check(body, "database") != "ok" || body["ok"] != false ||
		len(body["failed"].([]any)) != 1 || body["failed"].([]any)[0] != "storage" {
		t.Errorf("with a broken storage: %v", body)
	}
	if code, msg := hc(h); code != 1 || !strings.Contains(msg, "storage failed disk storage:") || !strings.Contains(msg, "503") {
		t.Errorf("healthcheck with a broken storage: exit %d: %s", code, msg)
	}
	// Why it failed is the operator's business: paths are not told to everyone.
	r := h.do("GET", "/readyz", "", nil, map[string]string{"Authorization": "Bearer " + testAdminToken})
	if !bytes.Contains(r.body, []byte(`"error":"disk storage:`)) || bytes.Contains(h.get("/readyz").body, []byte(`"error"`)) {
		t.Errorf("/readyz with and without the token: %s / %s", r.body, h.get("/readyz").body)
	}
	os.Remove(tmp)
	os.Mkdir(tmp, 0o750)
	testkit.Eventually(t, 5*readyMaxAge, func() bool { return h.get("/readyz").status == 200 }, "/readyz to see the storage mended")
	ready(h, 200)
	h.wantStatus(h.get("/healthz"), 200) // liveness never asked the checks

	// Less free space than required.
	full := startApp(t, map[string]string{"WHISPER_MODEL": noWhisper, "READY_MIN_FREE_BYTES": "4611686018427387904"})
	body = ready(full, 503)
	if check(body, "disk") != "failed" || body["failed"].([]any)[0] != "disk" {
		t.Errorf("with a full disk: %v", body)
	}
	if code, msg := hc(full); code != 1 || !strings.Contains(msg, "disk failed") || strings.Contains(msg, "READY_MIN_FREE_BYTES") {
		t.Errorf("healthcheck with a full disk: exit %d: %s", code, msg)
	}

	// An engine the configuration names must be there.
	named := startApp(t, map[string]string{"WHISPER_MODEL": noWhisper, "STT_ENGINE": "whisper"})
	body = ready(named, 503)
	if check(body, "engine.sst") != "failed" || check(body, "engine.vtt") != "failed" || check(body, "engine.tts") != "ok" {
		t.Errorf("with STT_ENGINE=whisper and no model: %v", body)
	}
}

// Wrong tokens at /metrics and /readyz are limited on their own: past 10 from an address
// even the right token is refused there, but the admin area's count is untouched. After
// 200 wrong bearer and basic tokens at both from 20 addresses, the right password from a
// new address signs in (issue 40: it got 429).
func TestMetricsWrongTokensAreRateLimitedOnTheirOwn(t *testing.T) {
	h := startApp(t, adminEnv(t, map[string]string{"TRUSTED_PROXIES": "127.0.0.1,::1"}))
	from := func(ip string, header map[string]string) map[string]string {
		out := map[string]string{"X-Forwarded-For": ip}
		for k, v := range header {
			out[k] = v
		}
		return out
	}
	right := map[string]string{"Authorization": "Bearer " + e2eAdminToken}
	h.wantStatus(h.do("GET", "/metrics", "", nil, from("198.51.100.1", right)), 200)
	for i := range 200 {
		auth := "Bearer wrong-token-0123456789abcdef-0123456789"
		if i%2 == 1 {
			auth = "Basic b3BlcmF0b3I6Z3Vlc3M="
		}
		path := "/metrics"
		if i%4 >= 2 {
			path = "/readyz"
		}
		r := h.do("GET", path, "", nil, from(fmt.Sprintf("198.51.100.%d", i%20), map[string]string{"Authorization": auth}))
		if path == "/metrics" {
			h.wantStatus(r, 401)
		}
	}
	h.wantStatus(h.do("GET", "/metrics", "", nil, from("198.51.100.1", right)), 401)
	h.wantStatus(h.do("GET", "/admin/orders", "", nil, from("198.51.100.1", map[string]string{"Authorization": "Bearer " + e2eAdminToken, "Accept": "application/json"})), 200)
	r := h.do("POST", "/admin/sign-in", "application/x-www-form-urlencoded",
		[]byte(url.Values{"password": {e2eAdminPassword}}.Encode()), from("203.0.113.77", nil))
	if r.status != 303 {
		t.Errorf("the right password from a new address after 200 bad tokens at /metrics and /readyz: %d %s, want 303", r.status, r.body)
	}
}

func TestHealthURL(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{":8080", "http://127.0.0.1:8080/readyz"},
		{"0.0.0.0:9000", "http://127.0.0.1:9000/readyz"},
		{"[::]:8080", "http://[::1]:8080/readyz"},
		{"127.0.0.2:8080", "http://127.0.0.2:8080/readyz"},
		{"[::1]:81", "http://[::1]:81/readyz"},
		{"localhost:8080", "http://localhost:8080/readyz"},
	} {
		if got, err := healthURL(c.addr); err != nil || got != c.want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", c.addr, got, err, c.want)
		}
	}
	for _, bad := range []string{"8080", "", "host:", "[::1"} {
		if got, err := healthURL(bad); err == nil {
			t.Errorf("healthURL(%q) = %q, want an error", bad, got)
		}
	}
}

// The subcommand passes against the real server and fails, saying why, against a port
// nobody listens on and against a server that answers something else.
func TestHealthcheckSubcommand(t *testing.T) {
	h := startApp(t, nil)
	env := func(addr string) func(string) string {
		return func(k string) string {
			if k == "ADDR" {
				return addr
			}
			return ""
		}
	}
	var stderr bytes.Buffer
	if code := healthcheck(env(strings.TrimPrefix(h.base, "http://")), &stderr); code != 0 {
		t.Fatalf("against the running server: exit %d: %s", code, stderr.String())
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	stderr.Reset()
	if code := healthcheck(env(closed), &stderr); code != 1 || !strings.Contains(stderr.String(), "refused") {
		t.Errorf("against a closed port: exit %d: %s", code, stderr.String())
	}

	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	defer other.Close()
	stderr.Reset()
	if code := healthcheck(env(strings.TrimPrefix(other.URL, "http://")), &stderr); code != 1 || !strings.Contains(stderr.String(), "503") {
		t.Errorf("against a server answering 503: exit %d: %s", code, stderr.String())
	}
}

// The first run here: whisper built, no model fetched. The block names both closed services
// once, says why, gives the one command, and says text-to-speech is served.
func TestClosedBlockNamesTheFix(t *testing.T) {
	cfg := Config{TTSEngine: "espeak", STTEngine: "whisper", WhisperModel: "models/ggml-base.bin"}
	noModel := fmt.Errorf("%w: whisper: model models/ggml-base.bin: %w", providers.ErrUnavailable, fs.ErrNotExist)
	closed := closedEngines(cfg, func(svc orders.Service) error {
		if svc == orders.TTS {
			return nil
		}
		return noModel
	})
	if len(closed) != 1 || len(closed[0].Services) != 2 {
		t.Fatalf("closedEngines = %+v, want one engine closing sst and vtt", closed)
	}
	block := health.ClosedBlock(closed)
	for _, want := range []string{"CLOSED  audio-to-text (/sst), video-to-text (/vtt)", "whisper engine: ",
		"open    models/download.sh base ", "OPEN    text-to-speech (/tts)", "/readyz and /admin"} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if strings.Count(block, "CLOSED") != 1 {
		t.Errorf("one engine, one entry:\n%s", block)
	}
	if got := health.ReasonsByService(closed)[orders.VTT]; !strings.Contains(got, "; to open: models/download.sh base") {
		t.Errorf("admin reason = %q", got)
	}
	if health.ClosedBlock(nil) != "" {
		t.Error("all open: no block")
	}
}

func TestFixFor(t *testing.T) {
	notBuilt := fmt.Errorf("%w: whisper: %w", providers.ErrUnavailable, whisper.ErrNotBuilt)
	tests := []struct {
		cfg    Config
		engine string
		err    error
		want   string
	}{
		{Config{WhisperModel: "models/ggml-base.bin"}, "whisper", notBuilt, "make run"},
		{Config{WhisperModel: "models/ggml-small.en.bin"}, "whisper", fs.ErrNotExist, "models/download.sh small.en "},
		{Config{WhisperModel: "/data/my-model.bin"}, "whisper", fs.ErrNotExist, "models/download.sh list"},
		{Config{}, "whisper", errors.New("no model configured"), "WHISPER_MODEL="},
		{Config{}, "openai", errors.New("openai: engine unavailable: OPENAI_API_KEY not set"), "OPENAI_API_KEY="},
		{Config{}, "espeak", errors.New("espeak-ng not found"), "bash .ci/install"},
		{Config{WhisperModel: "models/ggml-base.bin"}, "whisper", errors.New("not a ggml whisper model"), ""},
	}
	for _, tt := range tests {
		got := fixFor(tt.cfg, tt.engine, tt.err)
		if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("fixFor(%s, %v) = %q, want %q…", tt.engine, tt.err, got, tt.want)
		}
	}
}

// /readyz names whisper's device on the services it serves, and nothing on text-to-speech
// or for another engine.
func TestEngineDetail(t *testing.T) {
	for _, c := range []struct {
		svc     orders.Service
		backend string
		want    string
	}{
		{orders.STT, "CUDA0 (NVIDIA L4)", "whisper on CUDA0 (NVIDIA L4)"},
		{orders.VTT, "CPU, 8 threads", "whisper on CPU, 8 threads"},
		{orders.TTS, "CPU, 8 threads", ""},
		{orders.STT, "", ""},
	} {
		if got := engineDetail(c.svc, c.backend); got != c.want {
			t.Errorf("engineDetail(%s, %q) = %q, want %q", c.svc, c.backend, got, c.want)
		}
	}
}
