//go:build whisper

package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
)

// One order through the whisper.cpp engine, in-process, as a visitor places it: upload, pay,
// link, download. It runs with whisper.cpp's test model (placeholder weights: it says nothing
// useful, usually nothing at all) and the real Silero VAD model, so it proves the plumbing —
// a delivered file in the ordered format, times within the audio, no blank markers — not
// what the transcript says. `make whisper-test` runs it (CI does).
func TestWhisperEngineOrderEndToEnd(t *testing.T) {
	requireMediaTools(t)
	shared := filepath.Join("..", "shared", "testdata", "whisper")
	model := filepath.Join(shared, "for-tests-ggml-tiny.en.bin")
	vad := filepath.Join(shared, "for-tests-silero-v6.2.0-ggml.bin")
	for _, p := range []string{model, vad} {
		if _, err := os.Stat(p); err != nil {
			testkit.Missing(t, "whisper test models missing: "+p)
		}
	}
	h := startApp(t, map[string]string{"STT_ENGINE": "whisper", "WHISPER_MODEL": model,
		"WHISPER_VAD": "silero", "WHISPER_VAD_MODEL": vad, "WHISPER_THREADS": "2"})
	sst := h.get("/api/config").json(t)["services"].(map[string]any)["sst"].(map[string]any)
	if sst["open"] != true {
		t.Fatalf("audio-to-text closed with the whisper engine: %v", sst)
	}

	// Speech after 10 s of silence, as mp3.
	dir := t.TempDir()
	clip := testkit.Speech(t, dir, "speech.wav", testkit.SampleSentence)
	talk := filepath.Join(dir, "talk.mp3")
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-i", clip,
		"-af", "adelay=10000:all=1,apad=pad_dur=3", "-c:a", "libmp3lame", "-b:a", "64k", talk)
	data := mustRead(t, talk)
	seconds := probeSeconds(t, data)
	up := h.upload("talk.mp3", data).json(t)
	id := up["file"].(map[string]any)["path"].(string)

	order := map[string]any{"filePath": id, "fileName": "talk.mp3", "response_format": "verbose_json",
		"email": "listener@example.com", "emailVerify": "listener@example.com", "locale": "en"}
	r := h.postJSON("/payment/sst/create-checkout-session", map[string]any{"order": order})
	h.wantStatus(r, 200)
	co := r.json(t)
	sessionID := co["sessionId"].(string)
	h.wantStatus(h.do("POST", co["url"].(string)+"/pay", "", nil, nil), 303)
	link := h.waitForLinkOf("sst", sessionID, 2*time.Minute)
	dl := h.get(link)
	h.wantStatus(dl, 200)

	var got struct {
		Task     string
		Language string
		Duration float64
		Text     string
		Segments []struct {
			Start, End float64
			Text       string
		}
	}
	if err := json.Unmarshal(dl.body, &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, dl.body)
	}
	if got.Language != "english" || math.Abs(got.Duration-seconds) > 0.5 {
		t.Errorf("language %q, duration %.2f s; want english, %.2f s", got.Language, got.Duration, seconds)
	}
	for i, s := range got.Segments {
		if s.Start < 0 || s.End < s.Start || s.End > got.Duration+0.01 {
			t.Errorf("segment %d: %.2f–%.2f outside the audio", i, s.Start, s.End)
		}
		// Silero hears nothing before 10 s: nothing may be placed there.
		if s.Start < 9.5 {
			t.Errorf("segment %d at %.2f s, in the silence before the speech", i, s.Start)
		}
	}
	for _, marker := range []string{"[BLANK_AUDIO]", "[_BEG_]", "[_TT_", "<|"} {
		if bytes.Contains(dl.body, []byte(marker)) {
			t.Errorf("delivered transcript contains %q:\n%s", marker, dl.body)
		}
	}
	if n := len(dirFiles(t, filepath.Join(h.cfg.DataDir, "outbox"))); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
	t.Logf("%d segments, text %q", len(got.Segments), strings.TrimSpace(got.Text))
}
