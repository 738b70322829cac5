package main

// Benchmarks for the performance targets of the text-to-speech issue. Run them with
//
//	go test -run '^$' -bench . -benchtime 5x .
//
// Each reports its own metric (ms to the link, requests per second, p99, ms to /healthz)
// next to Go's ns/op, so the numbers can be compared with the targets directly.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/testkit"
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

// BenchmarkTTSLinkReady50000CharsVsBare measures payment → link for 50,000 characters of
// English with espeak-ng in every format, next to the bare pipeline (one espeak-ng piped
// into one ffmpeg encode with the same settings, to a file), alternated in the same run
// (the bare pipeline first in even runs, the order first in odd ones) so that load from
// elsewhere weighs on both alike. Target on 2 cores (issue 32): the link within 0.6× the
// bare pipeline for mp3 (medians), 0.7× in a single run.
//
// Besides the medians and their ratio it reports the median of each pair's ratio, the CPU
// time of each (this process and its finished children: the bare pipeline's two
// processes; the order's espeak-ng, ffmpeg and ffprobe runs and the server's own work),
// which load from elsewhere moves far less than the wall-clock time, and the cores each
// kept busy on average (CPU time over wall-clock time; a busy machine lends fewer).
//
//	go test -run '^$' -bench TTSLinkReady50000CharsVsBare/mp3 -benchtime 6x .
func BenchmarkTTSLinkReady50000CharsVsBare(b *testing.B) {
	requireMediaTools(b)
	// The link is ready once the result is stored: the benchmark hears that step instead
	// of asking for the link every 20 ms (testkit.PollInterval), which cost the server
	// 0.7–0.9 s of CPU over a 20-second order, beside the order's own work on 2 cores (a
	// visitor's page asks once a second).
	stored := make(chan string, 16)
	h := startAppTuned(b, map[string]string{"TTS_MAX_CHARS": "100000"},
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		func(c *Config) {
			c.checkpoint = func(id, step string) {
				if step == "stored" {
					stored <- id
				}
			}
		})
	text := benchText(50000)
	for _, format := range providers.SpeechFormats {
		b.Run(format, func(b *testing.B) {
			var link, bare timedRuns
			bareRun := func() { bare.measure(func() { bareTTS(b, text, format) }) }
			linkRun := func() {
				b.StopTimer()
				sessionID, url := h.checkout(ttsOrder(text, "alloy", format, 1, "bench@example.com", "en"))
				b.StartTimer()
				link.measure(func() {
					h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
					select {
					case <-stored:
					case <-time.After(2 * time.Minute):
						b.Fatal("no result stored within 2 minutes")
					}
					h.waitForLink(sessionID, 10*time.Second) // answered at the first ask
				})
			}
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					bareRun()
					linkRun()
				} else {
					linkRun()
					bareRun()
				}
			}
			ml, mb := medianOf(link.wall), medianOf(bare.wall)
			b.ReportMetric(float64(ml.Milliseconds()), "median-ms-to-link")
			b.ReportMetric(float64(mb.Milliseconds()), "median-ms-bare")
			b.ReportMetric(float64(ml)/float64(mb), "link/bare")
			ratios := make([]time.Duration, len(link.wall))
			for i := range ratios {
				ratios[i] = link.wall[i] * 1000 / bare.wall[i]
			}
			b.ReportMetric(float64(medianOf(ratios))/1000, "paired-link/bare")
			b.ReportMetric(float64(medianOf(link.cpu).Milliseconds()), "link-cpu-ms")
			b.ReportMetric(float64(medianOf(bare.cpu).Milliseconds()), "bare-cpu-ms")
			b.ReportMetric(float64(medianOf(link.self).Milliseconds()), "link-go-cpu-ms")
			b.ReportMetric(float64(medianOf(bare.self).Milliseconds()), "bare-go-cpu-ms")
			b.ReportMetric(link.cores(), "link-cores")
			b.ReportMetric(bare.cores(), "bare-cores")
		})
	}
}

// timedRuns are the wall-clock and CPU times of a benchmark's runs of one thing: cpu is
// this process's and its children's, self this process's alone.
type timedRuns struct{ wall, cpu, self []time.Duration }

// measure runs f and records how long it took and the CPU time this process and its
// children used meanwhile.
func (r *timedRuns) measure(f func()) {
	self, children := testkit.CPU()
	start := time.Now()
	f()
	r.wall = append(r.wall, time.Since(start))
	self2, children2 := testkit.CPU()
	r.cpu = append(r.cpu, self2-self+children2-children)
	r.self = append(r.self, self2-self)
}

// cores is the CPU time of all runs over their wall-clock time: the cores kept busy.
func (r *timedRuns) cores() float64 {
	var cpu, wall time.Duration
	for i := range r.wall {
		cpu, wall = cpu+r.cpu[i], wall+r.wall[i]
	}
	return float64(cpu) / float64(wall)
}

// bareTTS runs espeak-ng on the whole text piped into one ffmpeg encode to a file.
func bareTTS(b *testing.B, text, format string) {
	b.Helper()
	f, _ := media.Format(format)
	out := filepath.Join(b.TempDir(), "bare."+f.Ext)
	args, err := media.EncodeArgs(media.WAV, media.EncodeOptions{Format: format}, "file:"+out)
	if err != nil {
		b.Fatal(err)
	}
	espeak := exec.Command("espeak-ng", "--stdout", "-b", "1", "-v", "en-us", "-s", "175")
	testkit.Pipe(b, text, espeak, exec.Command("ffmpeg", args...))
}

func medianOf(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// The metrics target of the operator's issue: /metrics answers in under 50 ms with
// 100,000 orders in the database. Run it with
//
//	go test -run '^$' -bench 'Metrics' -benchtime 200x .
//
// It reports the median and p99 of one scrape (HTTP, token, every gauge read) next to
// /healthz measured the same way, in the same run, as the baseline.

// seedOrders writes n orders in one transaction, as a busy site keeps them: most
// delivered, some refunded or expired, a few hundred waiting or being produced, and as
// many finished River jobs beside a few waiting ones (in a queue no worker serves).
func seedOrders(tb testing.TB, h *harness, n int) {
	tb.Helper()
	ctx := context.Background()
	tx, err := h.app.db.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO orders (id, service, status, amount, currency, created_at, paid_at, done_at, error)
		VALUES (?, ?, ?, ?, 'eur', ?, ?, ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	job, err := tx.PrepareContext(ctx, `INSERT INTO river_job (kind, state, queue, attempt, attempted_at, finalized_at)
		VALUES ('fulfil', 'completed', 'held', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`)
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now().Add(-24 * time.Hour).UnixMilli()
	services := []string{"tts", "sst", "vtt"}
	for i := range n {
		status, reason := "done", ""
		switch {
		case i%50 == 1:
			status, reason = "refunded", "production_failed"
		case i%50 == 2:
			status = "expired"
		case i%200 == 3:
			status = "paid"
		case i%200 == 4:
			status = "processing"
		}
		at := now + int64(i)
		if _, err := ins.ExecContext(ctx, fmt.Sprintf("bench-%07d", i), services[i%3], status, 99+i%500, at, at+1000, at+5000, reason); err != nil {
			tb.Fatal(err)
		}
		if _, err := job.ExecContext(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO river_job (kind, state, queue) VALUES ('fulfil', 'available', 'held'), ('fulfil', 'available', 'held')`); err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkMetricsWith100kOrders: target — a scrape of /metrics under 50 ms with 100,000
// orders kept.
func BenchmarkMetricsWith100kOrders(b *testing.B) {
	h := startApp(b, map[string]string{"ADMIN_TOKEN": testAdminToken})
	// The leader's first sweep (run at start) is out of the queue before it is counted.
	if !testkit.WaitFor(30*time.Second, func() bool {
		var n int
		h.app.db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM river_job WHERE kind = 'sweep' AND state = 'completed'`).Scan(&n)
		return n > 0
	}) {
		b.Fatal("the first sweep did not run")
	}
	seedOrders(b, h, 100_000)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	f := scrapeMetrics(b, h.do("GET", "/metrics", "", nil, auth))
	if v, _ := series(f, "parla_orders_open", map[string]string{"state": "paid"}); v != 500 {
		b.Fatalf("parla_orders_open{state=paid} = %v, want the 500 seeded", v)
	}
	if v, _ := series(f, "parla_queue_jobs", map[string]string{"state": "available"}); v != 2 {
		b.Fatalf("parla_queue_jobs{state=available} = %v, want 2", v)
	}
	measure := func(path string, hdr map[string]string) []time.Duration {
		times := make([]time.Duration, 0, b.N)
		for range b.N {
			start := time.Now()
			r := h.do("GET", path, "", nil, hdr)
			times = append(times, time.Since(start))
			if r.status != 200 {
				b.Fatalf("%s: %d", path, r.status)
			}
		}
		slices.Sort(times)
		return times
	}
	base := measure("/healthz", nil)
	b.ResetTimer()
	times := measure("/metrics", auth)
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(times[len(times)/2]), "median-ms")
	b.ReportMetric(ms(times[len(times)*99/100]), "p99-ms")
	b.ReportMetric(ms(base[len(base)/2]), "healthz-median-ms")
	b.ReportMetric(ms(base[len(base)*99/100]), "healthz-p99-ms")
}
