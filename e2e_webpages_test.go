package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
	"parla/webui"
)

// pageLink is the link page a delivery letter gives for a download link (/d/ → /r/).
func pageLink(download string) string { return strings.Replace(download, "/d/", "/r/", 1) }

var browser = map[string]string{"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}

func withHeaders(base map[string]string, more ...string) map[string]string {
	h := map[string]string{}
	for k, v := range base {
		h[k] = v
	}
	for i := 0; i+1 < len(more); i += 2 {
		h[more[i]] = more[i+1]
	}
	return h
}

// The link page of a delivered transcript: what it is, its expiry, the download (a POST),
// the other formats at no charge, and "delete now" (asked first, refused cross-site); afterwards the
// page and /d/ answer 410 in the order's language, and JSON clients keep their JSON.
func TestLinkPageEndToEnd(t *testing.T) {
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	h := startApp(t, openai.env())
	dl, page := h.deliveredTranscript("es")

	// The letter: the page, a receipt with the amount in Spanish, no download link.
	msg := mustRead(t, dirFiles(t, h.cfg.DataDir+"/outbox")[0])
	for _, want := range []string{page, "Tu recibo", "SRT"} {
		if !bytes.Contains(msg, []byte(want)) {
			t.Errorf("the letter lacks %q", want)
		}
	}
	if bytes.Contains(msg, []byte(dl)) {
		t.Errorf("the letter gives the download link %s", dl)
	}

	// The page: a GET changes nothing, in the order's language.
	for range 2 {
		p := h.do("GET", page, "", nil, browser)
		h.wantStatus(p, 200)
		body := string(p.body)
		for _, want := range []string{`lang="es"`, "Tu archivo", "Formato: SRT", "Importe cobrado:", "Tiempo restante:",
			`action="` + dl + `"`, `value="vtt"`, `value="verbose_json"`, `value="text"`, `value="json"`, "Eliminar ahora"} {
			if !strings.Contains(body, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		if strings.Contains(body, `value="srt"`) {
			t.Errorf("the page offers the ordered format as another one")
		}
		csp := p.header.Get("Content-Security-Policy")
		if p.header.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(p.header.Get("Cache-Control"), "no-store") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'sha256-") {
			t.Errorf("the page's headers: %v", p.header)
		}
	}

	// Its buttons: the download, and another format made from the kept segments.
	file := h.do("POST", dl, "application/x-www-form-urlencoded", nil, browser)
	h.wantStatus(file, 200)
	if !bytes.HasPrefix(file.body, []byte("1\n00:00:00,000 --> ")) {
		t.Errorf("the download is not the SRT: %s", file.body)
	}
	vtt := h.do("POST", dl, "application/x-www-form-urlencoded", []byte("format=vtt"), browser)
	h.wantStatus(vtt, 200)
	if !bytes.HasPrefix(vtt.body, []byte("WEBVTT")) || !bytes.Contains(vtt.body, []byte("Hello from Parla.")) ||
		!strings.HasSuffix(vtt.header.Get("Content-Disposition"), `.vtt"`) {
		t.Errorf("the VTT: %v\n%s", vtt.header, vtt.body)
	}
	verbose := h.get(dl + "?format=verbose_json")
	h.wantStatus(verbose, 200)
	if !bytes.Contains(verbose.body, []byte(`"segments"`)) || !strings.HasSuffix(verbose.header.Get("Content-Disposition"), `-verbose.json"`) {
		t.Errorf("verbose_json: %v\n%s", verbose.header, verbose.body)
	}
	if code := h.get(dl + "?format=docx").json(t)["error"].(map[string]any)["code"]; code != "invalid_format" {
		t.Errorf("an unknown format answers %v", code)
	}

	// Delete now: refused from another site (and without any origin), obeyed from the page.
	for _, hdr := range []map[string]string{
		withHeaders(browser, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"),
		withHeaders(browser, "Origin", "https://evil.example"),
		browser,
	} {
		r := h.do("POST", page+"/delete", "application/x-www-form-urlencoded", nil, hdr)
		h.wantStatus(r, 403)
		if !strings.Contains(string(r.body), "No se ha eliminado nada") {
			t.Errorf("the refusal does not say so: %s", r.body)
		}
	}
	h.wantStatus(h.do("GET", dl, "", nil, nil), 200)
	// The page's button asks first (no script needed) and erases nothing yet.
	ask := h.do("POST", page+"/delete", "application/x-www-form-urlencoded", nil,
		withHeaders(browser, "Sec-Fetch-Site", "same-origin", "Origin", h.base))
	h.wantStatus(ask, 200)
	for _, want := range []string{"¿Eliminar este archivo?", `name="confirm" value="yes"`, `href="` + page + `"`} {
		if !strings.Contains(string(ask.body), want) {
			t.Errorf("the confirmation lacks %q: %s", want, ask.body)
		}
	}
	h.wantStatus(h.do("GET", dl, "", nil, nil), 200)
	// Its yes is refused from another site too.
	h.wantStatus(h.do("POST", page+"/delete", "application/x-www-form-urlencoded", []byte("confirm=yes"),
		withHeaders(browser, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")), 403)
	del := h.do("POST", page+"/delete", "application/x-www-form-urlencoded", []byte("confirm=yes"),
		withHeaders(browser, "Sec-Fetch-Site", "same-origin", "Origin", h.base))
	h.wantStatus(del, 200)
	if !strings.Contains(string(del.body), "se han borrado de nuestros servidores") {
		t.Errorf("delete now does not say so: %s", del.body)
	}
	if left := dirFiles(t, h.cfg.DataDir+"/files"); len(left) != 0 {
		t.Errorf("files left after delete now: %v", left)
	}

	// Afterwards: 410 pages in Spanish for a browser, JSON for the others.
	for _, path := range []string{page, dl, dl + "?format=vtt"} {
		r := h.do("GET", path, "", nil, withHeaders(browser, "Accept-Language", "ru"))
		h.wantStatus(r, 410)
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") || !strings.Contains(string(r.body), "Este enlace ha caducado") {
			t.Errorf("%s: %s\n%s", path, ct, r.body)
		}
	}
	if code := h.get(dl).json(t)["error"].(map[string]any)["code"]; code != "link_expired" {
		t.Errorf("a JSON client gets %v", code)
	}
	h.wantStatus(h.do("POST", page+"/delete", "", nil, withHeaders(browser, "Sec-Fetch-Site", "same-origin")), 410)
}

// deliveredTranscript orders and pays an SRT transcript of a spoken sentence in the given
// interface language, and returns its download path and its link page.
func (h *harness) deliveredTranscript(locale string) (dl, page string) {
	t := h.t
	data, _ := os.ReadFile(testkit.Speech(t, t.TempDir(), "talk.mp3", testkit.SampleSentence))
	up := h.upload("talk.mp3", data).json(t)
	order := map[string]any{"filePath": up["file"].(map[string]any)["path"].(string), "fileName": "talk.mp3",
		"response_format": "srt", "email": "listener@example.com", "emailVerify": "listener@example.com",
		"locale": locale, "language": "en"}
	r := h.postJSON("/payment/sst/create-checkout-session", map[string]any{"order": order})
	h.wantStatus(r, 200)
	co := r.json(t)
	h.wantStatus(h.do("POST", co["url"].(string)+"/pay", "", nil, nil), 303)
	link := h.waitForLinkOf("sst", co["sessionId"].(string), 30*time.Second)
	u, _ := url.Parse(link)
	return u.Path, pageLink(u.Path)
}

// An unknown link: a 404 page in the browser's language, JSON for API clients.
func TestUnknownLinkPages(t *testing.T) {
	h := startApp(t, nil)
	for _, c := range []struct{ path, lang, want string }{
		{"/d/nope", "ru-RU,ru;q=0.9,en;q=0.8", "Такой ссылки нет"},
		{"/r/nope", "ar", "هذا الرابط غير موجود"},
		{"/r/nope", "fr-FR,ja;q=0.8", "このリンクは存在しません"},
		{"/d/nope?lang=es", "en", "Este enlace no existe"},
		{"/r/nope", "", "This link does not exist"},
	} {
		r := h.do("GET", c.path, "", nil, withHeaders(browser, "Accept-Language", c.lang))
		h.wantStatus(r, 404)
		if !strings.Contains(string(r.body), c.want) || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Errorf("%s (%s): %s", c.path, c.lang, r.body)
		}
	}
	if code := h.get("/d/nope").json(t)["error"].(map[string]any)["code"]; code != "not_found" {
		t.Errorf("a JSON client gets %v", code)
	}
	if code := h.do("GET", "/r/nope", "", nil, map[string]string{"Accept": "application/json"}).json(t)["error"].(map[string]any)["code"]; code != "not_found" {
		t.Errorf("a JSON client of the page gets %v", code)
	}
}

// TestServedPagesAreInTheirLanguage asks the real app, over plain HTTP as a crawler would
// (no JavaScript), for pages in several languages, an unknown route, and the privacy page
// with a changed retention setting.
func TestServedPagesAreInTheirLanguage(t *testing.T) {
	if _, err := fs.Stat(webui.Dist, "dist/index.html"); err != nil {
		testkit.Missing(t, "the web UI is not built (make ui)")
	}
	h := startApp(t, map[string]string{"UPLOAD_TTL": "7h", "CONTACT_EMAIL": "help@parla.example"})
	base := h.base
	cases := []struct{ path, want string }{
		{"/es/tts", `<html lang="es" dir="ltr">`},
		{"/es/tts", `<title>Texto a voz · Parla: texto a voz y transcripción de pago por uso</title>`},
		{"/es/tts", `<link rel="canonical" href="` + base + `/es/tts" />`},
		{"/es/tts", `<link rel="alternate" hreflang="ja" href="` + base + `/ja/tts" />`},
		{"/es/tts", `<link rel="alternate" hreflang="x-default" href="` + base + `/tts" />`},
		{"/es/tts", `<meta property="og:url" content="` + base + `/es/tts" />`},
		{"/es/tts", `<meta property="og:image" content="` + base + `/og.png" />`},
		{"/ar/refunds", `<html lang="ar" dir="rtl">`},
		{"/ar/refunds", `<title>سياسة الاسترداد · `},
		{"/tts", `<link rel="alternate" hreflang="es" href="` + base + `/es/tts" />`},
		{"/", `&#34;contact&#34;:&#34;help@parla.example&#34;`},
		{"/privacy", `&#34;uploadHours&#34;:7`},
	}
	for _, c := range cases {
		r := h.get(c.path)
		if r.status != 200 || !strings.Contains(string(r.body), c.want) {
			t.Errorf("GET %s: %d, lacks %s in\n%.1500s", c.path, r.status, c.want, r.body)
		}
	}
	for _, p := range []string{"/nope", "/es/nope", "/tts/extra"} {
		if r := h.get(p); r.status != 404 || !strings.Contains(string(r.body), `<div id="root">`) {
			t.Errorf("GET %s: %d, want 404 with the app's not-found page", p, r.status)
		}
	}
	if r := h.get("/og.png"); r.status != 200 || r.header.Get("Content-Type") != "image/png" || len(r.body) < 1000 {
		t.Errorf("/og.png: %d %s %d bytes", r.status, r.header.Get("Content-Type"), len(r.body))
	}
	ret, _ := h.get("/api/config").json(t)["retention"].(map[string]any)
	if ret["uploadHours"] != float64(7) || ret["linkDays"] != float64(10) {
		t.Errorf("/api/config retention = %v", ret)
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
	c := h.get("/api/config").json(t)
	if c["contactEmail"] != "contact@localhost" {
		t.Errorf("contactEmail = %v", c["contactEmail"])
	}
	// Every page carries GET /api/config's object, so the app paints its shape at once.
	for _, p := range []string{"/", "/es/tts", "/ar/sst"} {
		page := string(h.get(p).body)
		_, inline, ok := strings.Cut(page, `<script type="application/json" id="parla-config">`)
		inline, _, _ = strings.Cut(inline, "</script>")
		var got map[string]any
		if err := json.Unmarshal([]byte(inline), &got); !ok || err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("%s carries %.300s (%v), want /api/config's %v", p, inline, err, c)
		}
	}
	for _, p := range []string{"/api/unknown", "/services/tts/x/y", "/webhooks/x"} {
		r := h.get(p)
		if r.status != 404 || r.json(t)["error"].(map[string]any)["code"] != "not_found" {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
}

// sameSite are the headers a fetch from Parla's own page carries.
var sameSite = map[string]string{"Sec-Fetch-Site": "same-origin", "Accept": "application/json"}

// errorCode reads an error answer's stable code.
func errorCode(t *testing.T, r reply) any {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	return e["code"]
}

// The transcript editor's routes on a delivered transcript: the link's token reads the
// cues as delivered (without what the cleaner dropped) and their version (ETag); a save
// from the page is checked and then served in every format, the ordered download
// included; saving or going back from another site, without a version, or from a version
// saved over is refused; "back to the original" restores it; "delete now" erases the edit
// with the result. A speech link has nothing to edit. The edited text never reaches the
// logs.
func TestTranscriptEditorEndToEnd(t *testing.T) {
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	logs := &testkit.LogBuffer{}
	env := openai.env()
	env["RATE_LIMIT"] = "10" // the editor's bucket: 40 a minute
	h := startAppLogging(t, env, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	openai.noisy.Store(true)
	dl, page := h.deliveredTranscript("ar")

	// The link page leads to the editor, which is the app behind the link page's guards.
	p := h.do("GET", page, "", nil, browser)
	if !strings.Contains(string(p.body), `href="/ar`+page+`/edit"`) {
		t.Errorf("the link page has no Edit link:\n%s", p.body)
	}
	if _, err := fs.Stat(webui.Dist, "dist/index.html"); err == nil { // the app is built
		ed := h.do("GET", "/ar"+page+"/edit", "", nil, browser)
		h.wantStatus(ed, 200)
		if ed.header.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(ed.header.Get("Cache-Control"), "no-store") ||
			!strings.Contains(string(ed.body), `lang="ar" dir="rtl"`) || strings.Contains(string(ed.body), `rel="canonical"`) {
			t.Errorf("the editor's page: %v\n%s", ed.header, ed.body)
		}
	}
	h.wantStatus(h.do("GET", "/r/nope/edit", "", nil, browser), 404)

	got := h.do("GET", page+"/transcript", "", nil, nil)
	h.wantStatus(got, 200)
	var tr struct {
		Duration int64 `json:"duration"`
		Format   string
		Original []map[string]any
		Edited   []map[string]any
	}
	if err := json.Unmarshal(got.body, &tr); err != nil || len(tr.Original) == 0 || tr.Edited != nil || tr.Format != "srt" || tr.Duration <= 0 {
		t.Fatalf("the transcript: %v %s", err, got.body)
	}
	if bytes.Contains(got.body, []byte("MUSIC")) || got.header.Get("ETag") != `"0"` {
		t.Errorf("the editor starts from %s, version %q; want the cues as delivered, version \"0\"", got.body, got.header.Get("ETag"))
	}
	v0 := withHeaders(sameSite, "If-Match", `"0"`)

	cues := tr.Original
	cues[0]["text"] = "Dr. Ortega says hello."
	body, _ := json.Marshal(map[string]any{"cues": cues})
	for _, hdr := range []map[string]string{{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, {"Origin": "https://evil.example"}, nil} {
		r := h.do("PUT", page+"/transcript", "application/json", body, hdr)
		h.wantStatus(r, 403)
		if errorCode(t, r) != "cross_site" {
			t.Errorf("a cross-site save: %s", r.body)
		}
	}
	bad := []map[string]any{{"start": 0, "end": tr.Duration + 1, "text": "Too long."}}
	badBody, _ := json.Marshal(map[string]any{"cues": bad})
	if r := h.do("PUT", page+"/transcript", "application/json", badBody, v0); r.status != 400 || errorCode(t, r) != "invalid_transcript" {
		t.Errorf("a cue past the end: %d %s", r.status, r.body)
	}
	if r := h.do("PUT", page+"/transcript", "application/json", body, sameSite); r.status != 428 || errorCode(t, r) != "version_required" {
		t.Errorf("a save without If-Match: %d %s", r.status, r.body)
	}
	saved := h.do("PUT", page+"/transcript", "application/json", body, v0)
	h.wantStatus(saved, 200)
	if saved.header.Get("ETag") != `"1"` {
		t.Errorf("the save's version: %q", saved.header.Get("ETag"))
	}
	// Another tab still on version 0 saves: refused, the first save stands.
	cues[0]["text"] = "From a stale tab."
	stale, _ := json.Marshal(map[string]any{"cues": cues})
	if r := h.do("PUT", page+"/transcript", "application/json", stale, v0); r.status != 409 || errorCode(t, r) != "edit_conflict" {
		t.Errorf("a save from a version saved over: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", page+"/transcript", "", nil, v0); r.status != 409 || errorCode(t, r) != "edit_conflict" {
		t.Errorf("a revert from a version saved over: %d %s", r.status, r.body)
	}

	// Every format carries the edit, the ordered download too; another device sees it.
	for _, path := range []string{dl, dl + "?format=vtt", dl + "?format=text"} {
		r := h.do("GET", path, "", nil, nil)
		h.wantStatus(r, 200)
		if !bytes.Contains(r.body, []byte("Ortega")) {
			t.Errorf("%s lacks the edit:\n%s", path, r.body)
		}
	}
	for _, path := range []string{dl + "?format=text", dl + "?format=verbose_json"} {
		if r := h.get(path); bytes.Contains(r.body, []byte("MUSIC")) || bytes.Contains(r.body, []byte("stale tab")) {
			t.Errorf("%s after the save:\n%s", path, r.body)
		}
	}
	again := h.do("GET", page+"/transcript", "", nil, nil)
	if e, _ := again.json(t)["edited"].([]any); len(e) == 0 || again.header.Get("ETag") != `"1"` {
		t.Errorf("the saved edit is not served back: %s %v", again.body, again.header)
	}

	// Back to the original: refused cross-site, obeyed from the page.
	h.wantStatus(h.do("DELETE", page+"/transcript", "", nil, map[string]string{"Sec-Fetch-Site": "cross-site"}), 403)
	h.wantStatus(h.do("DELETE", page+"/transcript", "", nil, withHeaders(sameSite, "If-Match", `"1"`)), 200)
	if r := h.get(dl + "?format=text"); bytes.Contains(r.body, []byte("Ortega")) {
		t.Errorf("the original still carries the edit: %s", r.body)
	}
	h.wantStatus(h.do("PUT", page+"/transcript", "application/json", body, withHeaders(sameSite, "If-Match", "*")), 200)

	// Delete now (confirmed) erases the edit too.
	h.wantStatus(h.do("POST", page+"/delete", "application/x-www-form-urlencoded", []byte("confirm=yes"),
		withHeaders(browser, "Sec-Fetch-Site", "same-origin")), 200)
	if left := dirFiles(t, h.cfg.DataDir+"/files"); len(left) != 0 {
		t.Errorf("files left after delete now: %v", left)
	}
	if r := h.do("GET", page+"/transcript", "", nil, nil); r.status != 410 || errorCode(t, r) != "link_expired" {
		t.Errorf("the transcript after delete now: %d %s", r.status, r.body)
	}
	if strings.Contains(logs.String(), "Ortega") {
		t.Errorf("the edited text reached the log")
	}

	// A speech link has no transcript.
	sid, payURL := h.checkout(ttsOrder("Nothing to correct here.", "nova", "mp3", 1, "a@example.com", "en"))
	h.wantStatus(h.do("POST", payURL+"/pay", "", nil, nil), 303)
	speech, _ := url.Parse(h.waitForLink(sid, 30*time.Second))
	if r := h.get(pageLink(speech.Path) + "/transcript"); r.status != 404 || errorCode(t, r) != "no_transcript" {
		t.Errorf("a speech link's transcript: %d %s", r.status, r.body)
	}
	if p := h.do("GET", pageLink(speech.Path), "", nil, browser); strings.Contains(string(p.body), "/edit\"") {
		t.Errorf("a speech link offers the editor")
	}

	// The editor's routes are rate limited per client.
	for i := 0; ; i++ {
		r := h.get("/r/nope/transcript")
		if r.status == 429 {
			if errorCode(t, r) != "rate_limited" {
				t.Errorf("the limit answers %s", r.body)
			}
			break
		}
		if i == 40 {
			t.Fatal("no limit on the editor's routes")
		}
	}
}
