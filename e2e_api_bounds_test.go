package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The API's transcription bounds and the credit's validity, through the real server: a
// file longer than API_MAX_TRANSCRIPTION is refused naming the limit, nothing held and
// the engine never asked; a key left with less than the cheapest charged file (0.248 c) is
// refused 429 insufficient_quota before its file is measured (a file that is no audio
// would be 400 unreadable_audio if it were); API_CREDIT_VALID_DAYS is the validity the
// /api page is told.
func TestAPITranscriptionBoundsAndCreditDays(t *testing.T) {
	requireMediaTools(t)
	fake := startFakeOpenAI(t)
	env := fake.env()
	env["API_MAX_TRANSCRIPTION"] = "10s"
	env["API_CREDIT_VALID_DAYS"] = "90"
	h := startApp(t, env)
	cfg := h.do("GET", "/api/credit/config", "", nil, nil)
	if days := cfg.json(t)["validDays"]; days != float64(90) {
		t.Errorf("/api/credit/config says %v valid days, want 90", days)
	}
	key := h.buyCredit(500, "bounds@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key}

	body, ctype := transcriptionForm(t, paddedMP3(t, 20), "model", "whisper-1")
	r := h.do("POST", "/v1/audio/transcriptions", ctype, body, auth)
	if r.status != 400 || !strings.Contains(string(r.body), `"code":"audio_too_long"`) || !strings.Contains(string(r.body), "at most 10s") {
		t.Errorf("a 20 s file over a 10 s limit: %d %s, want 400 audio_too_long naming 10s", r.status, r.body)
	}
	if got := fake.received(); len(got) != 0 || h.balanceOf(key) != 500 {
		t.Errorf("the refused file reached the engine %d times, the balance is %.3f; want none, 500", len(got), h.balanceOf(key))
	}

	// 4,096 then 954 characters at 99 thousandths of a cent each leave 0.050 c.
	for _, n := range []int{4096, 954} {
		speech, _ := json.Marshal(map[string]any{"model": "tts-1", "voice": "alloy", "input": strings.Repeat("a", n)})
		h.wantStatus(h.do("POST", "/v1/audio/speech", "application/json", speech, auth), 200)
	}
	if left := h.balanceOf(key); left != 0.05 {
		t.Fatalf("%.3f cents left, want 0.050", left)
	}
	noise := filepath.Join(t.TempDir(), "noise.mp3")
	os.WriteFile(noise, []byte(strings.Repeat("not audio at all ", 4096)), 0o600)
	body, ctype = transcriptionForm(t, noise, "model", "whisper-1")
	r = h.do("POST", "/v1/audio/transcriptions", ctype, body, auth)
	if r.status != 429 || !strings.Contains(string(r.body), `"code":"insufficient_quota"`) || r.header.Get("x-should-retry") != "false" {
		t.Errorf("0.050 c left: %d %s, want 429 insufficient_quota before the file is measured", r.status, r.body)
	}
}
