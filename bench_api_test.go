package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
)

// BenchmarkAPISpeechVsSiteOrder: one text of 1,000 characters, mp3, three ways: the bare
// engine (espeak-ng and the encoder, called in process), one API call (key, hold, language,
// engine, settle, answer), and the site's own order (checkout, pay, the job, stored, link,
// letter, downloaded). The API's overhead is its median less the bare engine's.
//
//	go test -run '^$' -bench APISpeechVsSiteOrder -benchtime 10x .
func BenchmarkAPISpeechVsSiteOrder(b *testing.B) {
	requireMediaTools(b)
	h := startApp(b, map[string]string{"API_CREDIT_MAX": "1000000"})
	key := h.buyCredit(1_000_000, "bench@example.com")
	text := benchText(1000)
	median := func(b *testing.B, run func()) {
		var times []time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			run()
			times = append(times, time.Since(start))
		}
		slices.Sort(times)
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	}
	b.Run("bare-engine", func(b *testing.B) {
		speaker, err := newSpeaker(h.cfg, media.New(media.Config{TempDir: b.TempDir()}), b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		median(b, func() {
			req := providers.SpeechRequest{Voice: "alloy", Text: text, Format: "mp3", Speed: 1, Language: "en"}
			if err := speaker.Speak(context.Background(), req, io.Discard); err != nil {
				b.Fatal(err)
			}
		})
	})
	body, _ := json.Marshal(map[string]any{"model": "tts-1", "input": text, "voice": "alloy"})
	b.Run("api-call", func(b *testing.B) {
		median(b, func() {
			r := h.do("POST", "/v1/audio/speech", "application/json", body, map[string]string{"Authorization": "Bearer " + key})
			if r.status != 200 || !bytes.HasPrefix(r.body, []byte("ID3")) && r.body[0] != 0xff {
				b.Fatalf("%d %.200s", r.status, r.body)
			}
		})
	})
	b.Run("site-order", func(b *testing.B) {
		median(b, func() {
			sessionID, url := h.checkout(ttsOrder(text, "alloy", "mp3", 1, "bench@example.com", "en"))
			h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
			h.wantStatus(h.get(h.waitForLink(sessionID, 2*time.Minute)), 200)
		})
	})
}
