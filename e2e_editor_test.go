package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
	"parla/webui"
)

// sameSite are the headers a fetch from Parla's own page carries.
var sameSite = map[string]string{"Sec-Fetch-Site": "same-origin", "Accept": "application/json"}

// errorCode reads an error answer's stable code.
func errorCode(t *testing.T, r reply) any {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	return e["code"]
}

// The transcript editor's routes on a delivered transcript: the link's token reads the
// cues; a save from the page is checked and then served in every format, the ordered
// download included; saving or going back from another site is refused; "back to the
// original" restores it; "delete now" erases the edit with the result. A speech link has
// nothing to edit. The edited text never reaches the logs.
func TestTranscriptEditorEndToEnd(t *testing.T) {
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	logs := &testkit.LogBuffer{}
	env := openai.env()
	env["RATE_LIMIT"] = "10" // the editor's bucket: 40 a minute
	h := startAppLogging(t, env, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
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
	if r := h.do("PUT", page+"/transcript", "application/json", badBody, sameSite); r.status != 400 || errorCode(t, r) != "invalid_transcript" {
		t.Errorf("a cue past the end: %d %s", r.status, r.body)
	}
	h.wantStatus(h.do("PUT", page+"/transcript", "application/json", body, sameSite), 200)

	// Every format carries the edit, the ordered download too; another device sees it.
	for _, path := range []string{dl, dl + "?format=vtt", dl + "?format=text"} {
		r := h.do("GET", path, "", nil, nil)
		h.wantStatus(r, 200)
		if !bytes.Contains(r.body, []byte("Ortega")) {
			t.Errorf("%s lacks the edit:\n%s", path, r.body)
		}
	}
	again := h.do("GET", page+"/transcript", "", nil, nil).json(t)
	if e, _ := again["edited"].([]any); len(e) == 0 {
		t.Errorf("the saved edit is not served back: %v", again)
	}

	// Back to the original: refused cross-site, obeyed from the page.
	h.wantStatus(h.do("DELETE", page+"/transcript", "", nil, map[string]string{"Sec-Fetch-Site": "cross-site"}), 403)
	h.wantStatus(h.do("DELETE", page+"/transcript", "", nil, sameSite), 200)
	if r := h.get(dl + "?format=text"); bytes.Contains(r.body, []byte("Ortega")) {
		t.Errorf("the original still carries the edit: %s", r.body)
	}
	h.wantStatus(h.do("PUT", page+"/transcript", "application/json", body, sameSite), 200)

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
