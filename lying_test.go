package main

import (
	"path/filepath"
	"testing"
	"time"

	"parla/providers/testkit"
)

// TestLyingFileRefusedBeforePayment: issue 30's FLAC (66 KB, 10 h of 8 kHz audio behind a
// header that says 60 s) is refused at analysis by link, with its own code, before any
// price is shown; so is the same file uploaded.
func TestLyingFileRefusedBeforePayment(t *testing.T) {
	requireMediaTools(t)
	env := startFakeOpenAI(t).env()
	env["ALLOW_PRIVATE_URLS"] = "1"
	h := startApp(t, env)
	dir := t.TempDir()
	lying := filepath.Join(dir, "lying.flac")
	testkit.LyingFLAC(t, lying, 8000, 10*time.Hour, time.Minute)
	videos := startVideoServer(t)
	r := h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": videos.serve("lying.flac", lying)})
	if r.status != 422 || codeOf(r) != "length_mismatch" {
		t.Errorf("analysing the lying FLAC: %d %s; want 422 length_mismatch", r.status, r.body)
	}
	ctype, body := multipartBody(t, [3]string{"file", "lying.flac", string(mustRead(t, lying))})
	r = h.do("POST", "/services/sst/uploadaudio", ctype, body, nil)
	if r.status != 422 || codeOf(r) != "length_mismatch" {
		t.Errorf("uploading the lying FLAC: %d %s; want 422 length_mismatch", r.status, r.body)
	}
}
