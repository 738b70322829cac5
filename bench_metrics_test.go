package main

// The metrics target of the operator's issue: /metrics answers in under 50 ms with
// 100,000 orders in the database. Run it with
//
//	go test -run '^$' -bench 'Metrics' -benchtime 200x .
//
// It reports the median and p99 of one scrape (HTTP, token, every gauge read) next to
// /healthz measured the same way, in the same run, as the baseline.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"parla/providers/testkit"
)

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
