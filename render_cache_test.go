package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Rendered downloads of a transcript carry an ETag that names the saved version of its
// text: the same rendering answers 304 to If-None-Match, a save changes it (and the new
// text is served, never the cached one), and rendered downloads have a rate-limit bucket
// of their own (4 × RATE_LIMIT a minute).
func TestRenderedDownloadsCachedPerVersion(t *testing.T) {
	requireMediaTools(t)
	env := startFakeOpenAI(t).env()
	env["RATE_LIMIT"] = "3" // 12 rendered downloads a minute
	h := startApp(t, env)
	dl, page := h.deliveredTranscript("en")
	vtt := dl + "?format=vtt"
	first := h.get(vtt)
	h.wantStatus(first, 200)
	etag := first.header.Get("ETag")
	if etag == "" {
		t.Fatalf("a rendered download without an ETag: %v", first.header)
	}
	if again := h.get(vtt); again.header.Get("ETag") != etag || !bytes.Equal(again.body, first.body) {
		t.Errorf("the same rendering again: ETag %q, want %q", again.header.Get("ETag"), etag)
	}
	if r := h.do("GET", vtt, "", nil, map[string]string{"If-None-Match": etag}); r.status != 304 {
		t.Errorf("If-None-Match with the current ETag: %d, want 304", r.status)
	}
	var tr struct{ Original []map[string]any }
	got := h.get(page + "/transcript")
	json.Unmarshal(got.body, &tr)
	if len(tr.Original) == 0 {
		t.Fatal("no cues")
	}
	tr.Original[0]["text"] = "Saved over the cache."
	body, _ := json.Marshal(map[string]any{"cues": tr.Original})
	h.wantStatus(h.do("PUT", page+"/transcript", "application/json", body, withHeaders(sameSite, "If-Match", got.header.Get("ETag"))), 200)
	saved := h.do("GET", vtt, "", nil, map[string]string{"If-None-Match": etag})
	if saved.status != 200 || saved.header.Get("ETag") == etag || !bytes.Contains(saved.body, []byte("Saved over the cache.")) {
		t.Errorf("after a save: %d, ETag %q (was %q)\n%s", saved.status, saved.header.Get("ETag"), etag, saved.body)
	}
	limited := false
	for range 12 {
		r := h.get(dl + "?format=srt")
		if r.status == 429 {
			limited = true
			break
		}
		h.wantStatus(r, 200)
	}
	if !limited {
		t.Error("16 rendered downloads within a minute, 12 allowed: none refused")
	}
	if r := h.get(page + "/transcript"); r.status != 200 {
		t.Errorf("the editor's own bucket is apart: %d", r.status)
	}
}
