package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// previewText is longer than a preview: the preview speaks its first sentences only.
const previewText = "The quick brown fox jumps over the lazy dog. It was a bright cold day in April, and the clocks were striking thirteen. " +
	"Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, I thought I would sail about a little. " +
	"This last sentence is never spoken in the preview, since the preview stops at about two hundred characters."

func TestTTSPreviewIsCachedAndRateLimitedInItsOwnBucket(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, map[string]string{"RATE_LIMIT": "3"})
	body := map[string]any{"text": previewText, "voice": "nova", "speed": 1.25, "format": "opus", "language": "en", "locale": "en"}

	first := h.postJSON("/api/tts/preview", body)
	h.wantStatus(first, 200)
	if ct := first.header.Get("Content-Type"); ct != "audio/ogg" && !strings.HasPrefix(ct, "audio/") {
		t.Errorf("Content-Type %q", ct)
	}
	if first.header.Get("X-Preview-Cached") != "false" {
		t.Errorf("first preview says cached=%q", first.header.Get("X-Preview-Cached"))
	}
	if n := first.header.Get("X-Preview-Characters"); n == "" || len(n) > 3 {
		t.Errorf("preview spoke %q characters, want at most ~200", n)
	}
	codec, secs := probe(t, first.body)
	if codec != "opus" || secs < 3 || secs > 20 {
		t.Errorf("preview is %s of %.1fs, want opus of a few seconds", codec, secs)
	}
	cached, _ := filepath.Glob(filepath.Join(h.cfg.DataDir, "previews", "espeak", "*"))
	if len(cached) != 1 {
		t.Fatalf("cache holds %v, want one preview", cached)
	}
	st, _ := os.Stat(cached[0])

	// The same text, voice, speed, format and language: from the cache, unchanged.
	second := h.postJSON("/api/tts/preview", body)
	h.wantStatus(second, 200)
	if second.header.Get("X-Preview-Cached") != "true" || !bytes.Equal(first.body, second.body) {
		t.Errorf("second preview not served from the cache (cached=%q)", second.header.Get("X-Preview-Cached"))
	}
	if st2, _ := os.Stat(cached[0]); st2.Size() != st.Size() {
		t.Error("cached preview changed")
	}
	// Another speed is another preview.
	body["speed"] = 1.0
	third := h.postJSON("/api/tts/preview", body)
	h.wantStatus(third, 200)
	if third.header.Get("X-Preview-Cached") != "false" || bytes.Equal(third.body, first.body) {
		t.Error("a preview at another speed came from the cache")
	}
	// The fourth in a minute is refused, cached or not...
	r := h.postJSON("/api/tts/preview", body)
	if r.status != 429 || r.json(t)["error"].(map[string]any)["code"] != "rate_limited" {
		t.Errorf("fourth preview in a minute: %d %s", r.status, r.body)
	}
	// ...while quotes and checkouts keep their own buckets.
	if q := h.postJSON("/api/tts/quote", map[string]string{"text": "Hello there.", "locale": "en"}); q.status != 200 {
		t.Errorf("quote after previews: %d %s", q.status, q.body)
	}
	h.checkout(ttsOrder("Hello.", "alloy", "mp3", 1, "p@example.com", "en"))
}

func TestTTSPreviewRefusesWhatAnOrderWould(t *testing.T) {
	h := startApp(t, nil)
	for code, body := range map[string]map[string]any{
		"invalid_voice":        {"text": "Hello.", "voice": "bob", "format": "mp3"},
		"invalid_format":       {"text": "Hello.", "voice": "nova", "format": "wav"},
		"invalid_speed":        {"text": "Hello.", "voice": "nova", "format": "mp3", "speed": 9},
		"empty_text":           {"text": "  ", "voice": "nova", "format": "mp3"},
		"language_unsupported": {"text": "Hello.", "voice": "nova", "format": "mp3", "language": "xx-Zzzz"},
	} {
		r := h.postJSON("/api/tts/preview", body)
		if r.status != 400 || r.json(t)["error"].(map[string]any)["code"] != code {
			t.Errorf("%s: %d %s", code, r.status, r.body)
		}
	}
}

// BenchmarkTTSPreview measures a preview click with espeak-ng: the endpoint's answer for
// a new text (not cached), median of 20. Budget: 1.5 s from the click to playback.
//
//	go test -run '^$' -bench BenchmarkTTSPreview -benchtime 1x .
func BenchmarkTTSPreview(b *testing.B) {
	requireMediaTools(b)
	h := startApp(b, nil)
	for range b.N {
		var took []time.Duration
		for i := range 20 {
			body := map[string]any{"text": strings.Repeat("x", i) + " " + previewText, "voice": "alloy", "format": "mp3", "speed": 1, "locale": "en"}
			start := time.Now()
			r := h.postJSON("/api/tts/preview", body)
			took = append(took, time.Since(start))
			if r.status != http.StatusOK || r.header.Get("X-Preview-Cached") != "false" {
				b.Fatalf("preview %d: %d cached=%s %s", i, r.status, r.header.Get("X-Preview-Cached"), r.body)
			}
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		b.ReportMetric(took[10].Seconds(), "median-s")
		b.ReportMetric(took[19].Seconds(), "max-s")
		if took[10] > 1500*time.Millisecond {
			b.Errorf("median preview %v, over the 1.5 s budget", took[10])
		}
	}
}
