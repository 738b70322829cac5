package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"parla/api/orders"
)

// scrape serves the metrics and parses them with Prometheus' own text parser.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// value is the value of the series of family with exactly these labels (counter, gauge,
// or a histogram's count), and whether it exists.
func value(families map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	f := families[family]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

type fakeGauges struct {
	g   orders.Gauges
	err error
}

func (f fakeGauges) Gauges(context.Context) (orders.Gauges, error) { return f.g, f.err }

func TestObserveCountsEachEvent(t *testing.T) {
	m := New(Config{Version: "v1", Engines: map[orders.Service]string{orders.TTS: "espeak", orders.STT: "whisper"}})
	for _, e := range []orders.Event{
		{Kind: orders.EventCreated, Service: orders.TTS},
		{Kind: orders.EventPaid, Service: orders.TTS, Amount: 198, Currency: "EUR"},
		{Kind: orders.EventPaid, Service: orders.STT, Amount: 99, Currency: "eur"},
		{Kind: orders.EventProduced, Service: orders.TTS, Took: 2 * time.Second, Audio: 10 * time.Second},
		{Kind: orders.EventProduced, Service: orders.STT, Took: time.Second, Reason: "failed"},
		{Kind: orders.EventDelivered, Service: orders.TTS},
		{Kind: orders.EventMailed, Service: orders.TTS, Reason: "delivered"},
		{Kind: orders.EventMailed, Service: orders.STT, Reason: "refunded", Err: errors.New("550 no such user a@b.example")},
		{Kind: orders.EventFailed, Service: orders.STT, Reason: "no_speech"},
		{Kind: orders.EventRefunded, Service: orders.STT, Reason: "no_speech", Amount: 99, Currency: "EUR"},
		{Kind: orders.EventRefunded, Service: orders.VTT, Reason: "Source: visitor@example.com", Amount: 5, Currency: "euro"},
		{Kind: orders.EventUpload, Service: orders.STT, Bytes: 1000},
		{Kind: orders.EventReconciled, Reason: "unqueued"},
	} {
		m.Observe(e)
	}
	m.LinkBytes(4096)
	f := scrape(t, m)
	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"parla_orders_total", map[string]string{"service": "tts", "state": "created"}, 1},
		{"parla_orders_total", map[string]string{"service": "tts", "state": "paid"}, 1},
		{"parla_orders_total", map[string]string{"service": "tts", "state": "delivered"}, 1},
		{"parla_orders_total", map[string]string{"service": "vtt", "state": "created"}, 0},
		{"parla_orders_total", map[string]string{"service": "sst", "state": "refunded"}, 1},
		{"parla_revenue_cents_total", map[string]string{"service": "tts", "currency": "eur"}, 198},
		{"parla_revenue_cents_total", map[string]string{"service": "sst", "currency": "eur"}, 99},
		{"parla_refunded_cents_total", map[string]string{"service": "sst", "currency": "eur"}, 99},
		{"parla_refunds_total", map[string]string{"service": "sst", "reason": "no_speech"}, 1},
		// Free text never becomes a label.
		{"parla_refunds_total", map[string]string{"service": "vtt", "reason": "other"}, 1},
		{"parla_refunded_cents_total", map[string]string{"service": "vtt", "currency": "other"}, 5},
		{"parla_job_duration_seconds", map[string]string{"service": "tts", "engine": "espeak", "outcome": "ok"}, 1},
		{"parla_job_duration_seconds", map[string]string{"service": "sst", "engine": "whisper", "outcome": "failed"}, 1},
		{"parla_engine_speed_ratio", map[string]string{"service": "tts", "engine": "espeak"}, 1},
		{"parla_engine_audio_seconds_total", map[string]string{"service": "tts", "engine": "espeak"}, 10},
		{"parla_emails_sent_total", map[string]string{"kind": "delivered"}, 1},
		{"parla_emails_failed_total", map[string]string{"kind": "refunded"}, 1},
		{"parla_emails_failed_total", map[string]string{"kind": "delivered"}, 0},
		{"parla_uploads_total", map[string]string{}, 1},
		{"parla_upload_bytes_total", map[string]string{}, 1000},
		{"parla_link_bytes_total", map[string]string{}, 4096},
		{"parla_build_info", map[string]string{"version": "v1"}, 1},
		{"parla_reconciled_total", map[string]string{"step": "unqueued"}, 1},
		{"parla_reconciled_total", map[string]string{"step": "lost"}, 0},
	} {
		if got, ok := value(f, c.family, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	h := f["parla_engine_speed_ratio"].GetMetric()[0].GetHistogram()
	if h.GetSampleSum() != 5 {
		t.Errorf("speed = %v, want 5 s of audio per s of work", h.GetSampleSum())
	}
	if _, ok := f["go_goroutines"]; !ok {
		t.Error("no Go runtime series")
	}
}

func TestScrapeReadsGauges(t *testing.T) {
	now := time.Now()
	g := orders.Gauges{
		Orders: []orders.OrderGauge{
			{Service: orders.VTT, Status: orders.Paid, Count: 3, OldestPaid: now.Add(-90 * time.Second)},
			{Service: orders.TTS, Status: orders.Processing, Count: 2, OldestPaid: now.Add(-time.Hour)},
		},
		Jobs:            map[string]int64{"available": 3, "running": 2},
		OldestAvailable: now.Add(-80 * time.Second),
		OldestRunning:   now.Add(-3 * time.Hour),
	}
	m := New(Config{Gauges: fakeGauges{g: g}, DataDir: t.TempDir(), JobTimeout: 2 * time.Hour})
	f := scrape(t, m)
	near := func(family string, labels map[string]string, want, tolerance float64) {
		t.Helper()
		got, ok := value(f, family, labels)
		if !ok || got < want-tolerance || got > want+tolerance {
			t.Errorf("%s%v = %v (found %v), want %v", family, labels, got, ok, want)
		}
	}
	near("parla_orders_open", map[string]string{"service": "vtt", "state": "paid"}, 3, 0)
	near("parla_orders_open", map[string]string{"service": "tts", "state": "processing"}, 2, 0)
	near("parla_orders_open", map[string]string{"service": "sst", "state": "paid"}, 0, 0)
	near("parla_orders_oldest_waiting_seconds", map[string]string{"service": "vtt"}, 90, 5)
	near("parla_orders_oldest_waiting_seconds", map[string]string{"service": "tts"}, 0, 0)
	near("parla_queue_jobs", map[string]string{"state": "available"}, 3, 0)
	near("parla_queue_jobs", map[string]string{"state": "retryable"}, 0, 0)
	near("parla_queue_oldest_waiting_seconds", nil, 80, 5)
	near("parla_queue_oldest_running_seconds", nil, 3*3600, 5)
	near("parla_job_timeout_seconds", nil, 7200, 0)
	if free, ok := value(f, "parla_data_dir_free_bytes", nil); !ok || free <= 0 {
		t.Errorf("free bytes = %v (%v)", free, ok)
	}

	// A failing read leaves the counters served.
	broken := New(Config{Gauges: fakeGauges{err: errors.New("database is locked")}})
	rec := httptest.NewRecorder()
	broken.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "parla_orders_total") || strings.Contains(rec.Body.String(), "parla_queue_jobs{") {
		t.Errorf("with a failing gauge read: %d\n%s", rec.Code, rec.Body)
	}
}

func TestCode(t *testing.T) {
	for in, want := range map[string]string{"no_speech": "no_speech", "": "other", "a@b.c": "other", "Upper": "other",
		"file name.mp3": "other", strings.Repeat("a", 41): "other", "whisper": "whisper", "source-gone": "source-gone"} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"EUR": "eur", "usd": "usd", "euro": "other", "e$r": "other"} {
		if got := currency(in); got != want {
			t.Errorf("currency(%q) = %q, want %q", in, got, want)
		}
	}
}

// The middleware counts requests by route pattern, never by path, with the status sent
// (errors included), and pages served by middleware at the root as one route, "/".
func TestMiddlewareCountsRoutesNotPaths(t *testing.T) {
	m := New(Config{})
	app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
		return c.Status(418).SendString("refused")
	}})
	app.Use(m.Middleware())
	app.Get("/d/:token", func(c *fiber.Ctx) error { return c.SendString("file") })
	app.Post("/fail/:id", func(c *fiber.Ctx) error { return errors.New("boom") })
	app.Use(func(c *fiber.Ctx) error { return c.SendString("page") })
	for _, r := range []struct{ method, path string }{
		{"GET", "/d/secret-token-1"}, {"GET", "/d/secret-token-2"}, {"POST", "/fail/ord_123"},
		{"GET", "/some/page"}, {"GET", "/visitor@example.com"},
	} {
		res, err := app.Test(httptest.NewRequest(r.method, r.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	f := scrape(t, m)
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"route": "/d/:token", "method": "GET", "status": "200"}, 2},
		{map[string]string{"route": "/fail/:id", "method": "POST", "status": "418"}, 1},
		{map[string]string{"route": "/", "method": "GET", "status": "200"}, 2},
	} {
		if got, ok := value(f, "parla_http_requests_total", c.labels); !ok || got != c.want {
			t.Errorf("requests%v = %v (%v), want %v; have %v", c.labels, got, ok, c.want, f["parla_http_requests_total"])
		}
	}
	for _, mf := range f {
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if strings.Contains(l.GetValue(), "secret") || strings.Contains(l.GetValue(), "@") || strings.Contains(l.GetValue(), "ord_") {
					t.Errorf("%s carries %s=%q", mf.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}
