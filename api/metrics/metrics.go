// Package metrics counts what Parla does, in Prometheus' format, on a registry of its own:
// orders and money (it is the order book's Observer), the engines' work, e-mails, uploads,
// bytes read from video links, HTTP requests by route, and, read at scrape time, the queue
// and the free space in DATA_DIR. No series carries an address, a token, an order id or
// a file name: labels are services, states, stable reason codes, engines, routes.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"parla/api/health"
	"parla/api/orders"
)

// Gauger reads the order book's gauges at scrape time (*orders.Book).
type Gauger interface {
	Gauges(ctx context.Context) (orders.Gauges, error)
}

// Config says what the metrics describe.
type Config struct {
	Version string
	// Engines names each service's engine (tts: espeak or openai; sst, vtt: whisper or
	// openai), the engine label of the work metrics.
	Engines map[orders.Service]string
	// DataDir is where free space is measured.
	DataDir string
	// JobTimeout is published as parla_job_timeout_seconds, so that alerts compare with
	// the setting in force.
	JobTimeout time.Duration
	// Gauges is read at each scrape; nil: no queue gauges.
	Gauges Gauger
	Log    *slog.Logger
}

// services are every service, so that their series exist before their first order.
var services = []orders.Service{orders.TTS, orders.STT, orders.VTT}

// Metrics holds Parla's series. It is safe for concurrent use.
type Metrics struct {
	cfg Config
	reg *prometheus.Registry

	orders        *prometheus.CounterVec
	revenue       *prometheus.CounterVec
	refundedCents *prometheus.CounterVec
	refunds       *prometheus.CounterVec
	jobDuration   *prometheus.HistogramVec
	speed         *prometheus.HistogramVec
	audio         *prometheus.CounterVec
	mailsSent     *prometheus.CounterVec
	mailsFailed   *prometheus.CounterVec
	uploads       prometheus.Counter
	uploadBytes   prometheus.Counter
	linkBytes     prometheus.Counter
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	apiCalls      *prometheus.CounterVec
	apiCharged    *prometheus.CounterVec
	reconciled    *prometheus.CounterVec
}

// New registers every series on a new registry, with Go's and the process's own.
func New(cfg Config) *Metrics {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	m := &Metrics{cfg: cfg, reg: prometheus.NewRegistry()}
	f := promauto{m.reg}
	m.orders = f.counter("parla_orders_total", "Orders entering a state: created, paid, delivered, failed, refunded.", "service", "state")
	m.revenue = f.counter("parla_revenue_cents_total", "Money taken, in minor units (cents), by service and currency.", "service", "currency")
	m.refundedCents = f.counter("parla_refunded_cents_total", "Money given back, in minor units (cents), by service and currency.", "service", "currency")
	m.refunds = f.counter("parla_refunds_total", "Refunds by service and reason (a stable code such as production_failed or no_speech).", "service", "reason")
	m.jobDuration = f.histogram("parla_job_duration_seconds", "Work of one fulfilment attempt (producing and storing the result), by service, engine and outcome (ok, failed).",
		[]float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200}, "service", "engine", "outcome")
	m.speed = f.histogram("parla_engine_speed_ratio", "Seconds of audio made or transcribed per second of work, per delivered attempt.",
		[]float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500}, "service", "engine")
	m.audio = f.counter("parla_engine_audio_seconds_total", "Seconds of audio made or transcribed (divide by parla_job_duration_seconds_sum for the speed).", "service", "engine")
	m.mailsSent = f.counter("parla_emails_sent_total", "Letters handed to the mail server, by kind (delivered, refunded; resent by the operator).", "kind")
	m.mailsFailed = f.counter("parla_emails_failed_total", "Letters the mail server did not take, by kind (delivered, refunded; resent by the operator).", "kind")
	m.uploads = prometheus.NewCounter(prometheus.CounterOpts{Name: "parla_uploads_total", Help: "Audio uploads accepted."})
	m.uploadBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "parla_upload_bytes_total", Help: "Bytes of accepted audio uploads."})
	m.linkBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "parla_link_bytes_total", Help: "Bytes read from visitors' video links (analysis and fetching)."})
	m.reg.MustRegister(m.uploads, m.uploadBytes, m.linkBytes)
	m.requests = f.counter("parla_http_requests_total", "HTTP requests by route pattern, method and status.", "route", "method", "status")
	m.latency = f.histogram("parla_http_request_duration_seconds", "Time to answer an HTTP request, by route pattern.",
		[]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}, "route")
	m.apiCalls = f.counter("parla_api_calls_total", "Charged calls of the OpenAI-compatible API (/v1), by model.", "model")
	m.apiCharged = f.counter("parla_api_charged_millicents_total", "API credit spent, in thousandths of a cent, by model.", "model")
	m.reconciled = f.counter("parla_reconciled_total", "Rows the reconciler moved past their bound, by step (lost, unqueued, unrefunded, and the app's own).", "step")
	for _, step := range []string{"lost", "unqueued", "unrefunded"} {
		m.reconciled.WithLabelValues(step)
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "parla_build_info", Help: "Always 1; the version is a label."}, []string{"version"})
	build.WithLabelValues(cfg.Version).Set(1)
	m.reg.MustRegister(build, scrapeCollector{m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, svc := range services {
		for _, state := range []string{"created", "paid", "delivered", "failed", "refunded"} {
			m.orders.WithLabelValues(string(svc), state)
		}
	}
	for _, kind := range []string{"delivered", "refunded"} {
		m.mailsSent.WithLabelValues(kind)
		m.mailsFailed.WithLabelValues(kind)
	}
	return m
}

// promauto registers labelled series on one registry.
type promauto struct{ reg *prometheus.Registry }

func (p promauto) counter(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	p.reg.MustRegister(c)
	return c
}

func (p promauto) histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	p.reg.MustRegister(h)
	return h
}

// Registry is the registry the series live on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Observe counts one event of an order's life (orders.Observer).
func (m *Metrics) Observe(e orders.Event) {
	svc := string(e.Service)
	switch e.Kind {
	case orders.EventCreated:
		m.orders.WithLabelValues(svc, "created").Inc()
	case orders.EventPaid:
		m.orders.WithLabelValues(svc, "paid").Inc()
		m.revenue.WithLabelValues(svc, currency(e.Currency)).Add(float64(max(e.Amount, 0)))
	case orders.EventProduced:
		engine := m.engine(e.Service)
		outcome := "ok"
		if e.Reason != "" {
			outcome = "failed"
		}
		m.jobDuration.WithLabelValues(svc, engine, outcome).Observe(e.Took.Seconds())
		if outcome == "ok" && e.Audio > 0 && e.Took > 0 {
			m.speed.WithLabelValues(svc, engine).Observe(e.Audio.Seconds() / e.Took.Seconds())
			m.audio.WithLabelValues(svc, engine).Add(e.Audio.Seconds())
		}
	case orders.EventDelivered:
		m.orders.WithLabelValues(svc, "delivered").Inc()
	case orders.EventFailed:
		m.orders.WithLabelValues(svc, "failed").Inc()
	case orders.EventRefunded:
		m.orders.WithLabelValues(svc, "refunded").Inc()
		m.refunds.WithLabelValues(svc, code(e.Reason)).Inc()
		m.refundedCents.WithLabelValues(svc, currency(e.Currency)).Add(float64(max(e.Amount, 0)))
	case orders.EventMailed:
		if e.Err != nil {
			m.mailsFailed.WithLabelValues(code(e.Reason)).Inc()
		} else {
			m.mailsSent.WithLabelValues(code(e.Reason)).Inc()
		}
	case orders.EventReconciled:
		m.reconciled.WithLabelValues(code(e.Reason)).Inc()
	case orders.EventUpload:
		m.uploads.Inc()
		m.uploadBytes.Add(float64(max(e.Bytes, 0)))
	}
}

// APICall counts one charged call of the API (api/v1) and what it cost, in thousandths of
// a cent. model is one of the API's fixed model names.
func (m *Metrics) APICall(model string, milli int64) {
	m.apiCalls.WithLabelValues(model).Inc()
	m.apiCharged.WithLabelValues(model).Add(float64(milli))
}

// LinkBytes counts bytes read from a visitor's video link (links.GuardConfig.CountBytes).
func (m *Metrics) LinkBytes(n int64) {
	if n > 0 {
		m.linkBytes.Add(float64(n))
	}
}

func (m *Metrics) engine(svc orders.Service) string {
	if e := m.cfg.Engines[svc]; e != "" {
		return code(e)
	}
	return "unknown"
}

// code keeps a label value to a short stable code (lower-case letters, digits, _ and -):
// anything else becomes "other", so no free text reaches a series.
func code(s string) string {
	if s == "" || len(s) > 40 {
		return "other"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return "other"
		}
	}
	return s
}

// currency is an ISO 4217 code in lower case, or "other".
func currency(s string) string {
	s = strings.ToLower(s)
	if len(s) != 3 || code(s) != s {
		return "other"
	}
	return s
}

// methods are the HTTP methods counted by name; any other is "other".
var methods = map[string]string{"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH",
	"DELETE": "DELETE", "OPTIONS": "OPTIONS"}

// Middleware counts every request by its route pattern (never the raw path), method and
// status, and times it. It answers errors itself, through the app's error handler, so the
// status counted is the one sent; place it after the recover and request id middleware.
func (m *Metrics) Middleware() fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		if err := c.Next(); err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				c.Status(fiber.StatusInternalServerError)
			}
		}
		// The pattern of the handler that answered: "/d/:token", never the token; the
		// app's pages and files, answered by middleware mounted at the root, are all "/".
		// A request no route took has a stand-in route holding its raw path: not a label.
		route := "other"
		if r := c.Route(); len(r.Handlers) > 0 {
			route = r.Path
		}
		// Fiber's strings point into reused buffers; a label must own its bytes, so the
		// method is one of our constants.
		method, ok := methods[c.Method()]
		if !ok {
			method = "other"
		}
		m.requests.WithLabelValues(route, method, strconv.Itoa(c.Response().StatusCode())).Inc()
		m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
		return nil
	}
}

// Handler serves the series in Prometheus' text format over net/http (METRICS_ADDR).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError, // a failed gauge read still serves the counters
		ErrorLog:      slogPrinter{m.cfg.Log},
		Timeout:       10 * time.Second,
	})
}

// FiberHandler is Handler for the public address's /metrics (api guards it).
func (m *Metrics) FiberHandler() fiber.Handler { return adaptor.HTTPHandler(m.Handler()) }

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Warn("serving metrics", "err", fmt.Sprint(v...)) }

// scrapeCollector reads the gauges when Prometheus scrapes: the queue from the order book
// and free space in DATA_DIR.
type scrapeCollector struct{ m *Metrics }

var (
	openOrdersDesc  = prometheus.NewDesc("parla_orders_open", "Paid orders not yet done, by service and state (paid: waiting for a worker; processing: being produced or waiting for a retry).", []string{"service", "state"}, nil)
	oldestPaidDesc  = prometheus.NewDesc("parla_orders_oldest_waiting_seconds", "Age since payment of the oldest paid order no worker has started, by service; 0 when none.", []string{"service"}, nil)
	jobsDesc        = prometheus.NewDesc("parla_queue_jobs", "Unfinished River jobs (fulfilment, refund, sweep) by state.", []string{"state"}, nil)
	oldestAvailDesc = prometheus.NewDesc("parla_queue_oldest_waiting_seconds", "How long the job waiting longest for a worker has waited; 0 when none.", nil, nil)
	oldestRunDesc   = prometheus.NewDesc("parla_queue_oldest_running_seconds", "How long the longest-running job attempt has run; 0 when none.", nil, nil)
	timeoutDesc     = prometheus.NewDesc("parla_job_timeout_seconds", "JOB_TIMEOUT: the longest one fulfilment attempt may run.", nil, nil)
	diskFreeDesc    = prometheus.NewDesc("parla_data_dir_free_bytes", "Free space in DATA_DIR's file system (for unprivileged use).", nil, nil)
	diskSizeDesc    = prometheus.NewDesc("parla_data_dir_size_bytes", "Size of DATA_DIR's file system.", nil, nil)
)

func (s scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{openOrdersDesc, oldestPaidDesc, jobsDesc, oldestAvailDesc, oldestRunDesc, timeoutDesc, diskFreeDesc, diskSizeDesc} {
		ch <- d
	}
}

func (s scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	cfg := s.m.cfg
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(timeoutDesc, cfg.JobTimeout.Seconds())
	if cfg.DataDir != "" {
		if d, err := health.DiskSpace(cfg.DataDir); err != nil {
			ch <- prometheus.NewInvalidMetric(diskFreeDesc, err)
		} else {
			gauge(diskFreeDesc, float64(d.Free))
			gauge(diskSizeDesc, float64(d.Total))
		}
	}
	if cfg.Gauges == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := cfg.Gauges.Gauges(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
		return
	}
	now := time.Now()
	age := func(t time.Time) float64 {
		if t.IsZero() {
			return 0
		}
		return max(now.Sub(t).Seconds(), 0)
	}
	open := map[orders.Service]map[orders.Status]orders.OrderGauge{}
	for _, og := range g.Orders {
		if open[og.Service] == nil {
			open[og.Service] = map[orders.Status]orders.OrderGauge{}
		}
		open[og.Service][og.Status] = og
	}
	for _, svc := range services {
		for _, st := range []orders.Status{orders.Paid, orders.Processing} {
			gauge(openOrdersDesc, float64(open[svc][st].Count), string(svc), string(st))
		}
		gauge(oldestPaidDesc, age(open[svc][orders.Paid].OldestPaid), string(svc))
	}
	for _, st := range []string{"available", "scheduled", "retryable", "running"} {
		gauge(jobsDesc, float64(g.Jobs[st]), st)
	}
	gauge(oldestAvailDesc, age(g.OldestAvailable))
	gauge(oldestRunDesc, age(g.OldestRunning))
}
