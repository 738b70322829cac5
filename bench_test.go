package main

// Benchmarks for the performance targets of the text-to-speech issue. Run them with
//
//	go test -run '^$' -bench . -benchtime 5x .
//
// Each reports its own metric (ms to the link, requests per second, p99, ms to /healthz)
// next to Go's ns/op, so the numbers can be compared with the targets directly.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchText is English prose of exactly n characters, cut at a space.
func benchText(n int) string {
	const para = "Parla turns text into speech for anyone who needs it. The visitor pays for what " +
		"they order and receives a link by e-mail. Each sentence here is ordinary prose, with " +
		"commas, numbers like 42 and 2026, and questions? Yes, and answers. "
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(para)
	}
	s := b.String()[:n]
	return s[:len(s)-1] + "."
}

// benchLinkReady measures payment → link for a text of n characters with espeak-ng.
func benchLinkReady(b *testing.B, n int) {
	requireMediaTools(b)
	h := startApp(b, map[string]string{"TTS_MAX_CHARS": "100000"})
	text := benchText(n)
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sessionID, url := h.checkout(ttsOrder(text, "alloy", "mp3", 1, "bench@example.com", "en"))
		b.StartTimer()
		start := time.Now()
		h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
		h.waitForLink(sessionID, 2*time.Minute)
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Milliseconds()), "median-ms-to-link")
	b.ReportMetric(float64(times[len(times)-1].Milliseconds()), "max-ms-to-link")
}

// BenchmarkTTSLinkReady1000Chars: target — link within 1.5 s of the payment.
func BenchmarkTTSLinkReady1000Chars(b *testing.B) { benchLinkReady(b, 1000) }

// BenchmarkTTSLinkReady50000Chars: target — link within 30 s of the payment.
func BenchmarkTTSLinkReady50000Chars(b *testing.B) { benchLinkReady(b, 50000) }

// BenchmarkCreateCheckoutUnderLoad: target — at least 500 requests/s with p99 under 50 ms
// at 50 concurrent clients on loopback, with the built-in test checkout. The server runs
// in this process, so client and server share the two cores.
func BenchmarkCreateCheckoutUnderLoad(b *testing.B) {
	h := startApp(b, map[string]string{"RATE_LIMIT": "0"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		loadCheckouts(b, h.base)
	}
}

// loadCheckouts sends 50 clients × 100 text-to-speech checkouts to base and reports
// requests per second, p50 and p99. Every request must succeed.
func loadCheckouts(b *testing.B, base string) {
	body, _ := json.Marshal(ttsOrder(benchText(800), "nova", "mp3", 1, "load@example.com", "en"))
	const clients, perClient = 50, 100
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var lat []time.Duration
	var failed int
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, perClient)
			bad := 0
			for r := 0; r < perClient; r++ {
				t0 := time.Now()
				resp, err := client.Post(base+"/payment/tts/create-checkout-session", "application/json", bytes.NewReader(body))
				if err != nil {
					bad++
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					bad++
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			failed += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failed > 0 {
		b.Fatalf("%d of %d requests failed", failed, clients*perClient)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}

// BenchmarkStartupToHealthz: target — the built binary answers /healthz within 1 s of
// being started, on a fresh data directory (migrations included).
func BenchmarkStartupToHealthz(b *testing.B) {
	builtBinary(b)
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, took := startBinary(b)
		times = append(times, took)
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Milliseconds()), "median-ms-to-healthz")
	b.ReportMetric(float64(times[len(times)-1].Milliseconds()), "max-ms-to-healthz")
}
