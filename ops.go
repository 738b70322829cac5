package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/health"
	"parla/api/orders"
	"parla/providers"
)

// bookGauges reads the order book's gauges for the metrics, once the book is built.
type bookGauges struct{ a *App }

func (g bookGauges) Gauges(ctx context.Context) (orders.Gauges, error) {
	if g.a.book == nil {
		return orders.Gauges{}, errors.New("the order book is not built yet")
	}
	return g.a.book.Gauges(ctx)
}

// readiness is what /readyz checks: the database answers, the storage takes a call, free
// space in DATA_DIR is above READY_MIN_FREE_BYTES, each service's engine is there, and
// each OpenAI-compatible server the engines call answers GET /models (api/health's
// servers.go; free,
// at OpenAI too). Text-to-speech is
// always required; audio- and video-to-text only when STT_ENGINE is set, else a missing
// engine leaves them closed by configuration, which /readyz reports without failing.
func (a *App) readiness(store providers.Storage) *health.Checker {
	checks := []health.Check{
		{Name: "database", Run: a.db.PingContext},
		{Name: "disk", Run: a.diskCheck()},
	}
	if s, ok := store.(providers.StorageChecker); ok {
		checks = append(checks, health.Check{Name: "storage", Run: s.Check})
	}
	for _, svc := range health.Services {
		checks = append(checks, health.Check{
			Name:     "engine." + string(svc),
			Optional: svc != orders.TTS && !a.cfg.STTRequired,
			Run:      func(context.Context) error { return a.engineCheck(svc) },
			Detail:   engineDetail(svc, a.sttBackend),
		})
	}
	checks = append(checks, health.ServerChecks(a.servers, a.cfg.STTRequired)...)
	// 1 s each, run together: /readyz answers within the 2 s `parla healthcheck` waits.
	return &health.Checker{Checks: checks, Timeout: time.Second, MaxAge: readyMaxAge}
}

// engineDetail is what /readyz tells the operator of a service's engine: where whisper
// computes, for the services it serves ("" when it is not the engine).
func engineDetail(svc orders.Service, sttBackend string) string {
	if svc == orders.TTS || sttBackend == "" {
		return ""
	}
	return "whisper on " + sttBackend
}

// diskCheck is /readyz's free-space check; when space is short it also names the bytes
// unpaid uploads hold, which the sweep frees first (orders.Config.LowDisk).
func (a *App) diskCheck() func(context.Context) error {
	free := health.FreeSpace(a.cfg.DataDir, uint64(a.cfg.ReadyMinFree))
	return func(ctx context.Context) error {
		err := free(ctx)
		if err == nil || a.book == nil {
			return err
		}
		if n, uerr := a.book.UnpaidUploadBytes(ctx); uerr == nil && n > 0 {
			return fmt.Errorf("%w; unpaid uploads hold %d bytes, freed first by the next sweep", err, n)
		}
		return err
	}
}

// readyMaxAge is how long /readyz answers its last report again: load balancers ask every
// few seconds, so a second's delay changes nothing for them, and a flood of requests runs
// the checks (a file written, a database ping) once a second at most.
const readyMaxAge = time.Second

// publicMetrics is /metrics on ADDR, or nil when METRICS_ADDR serves them instead.
func (a *App) publicMetrics() fiber.Handler {
	if a.cfg.MetricsAddr != "" {
		return nil
	}
	return a.metrics.FiberHandler()
}

// serveMetrics serves /metrics without a token on METRICS_ADDR, when set: an address on a
// private scrape network. The server is nil when it is not set.
func (a *App) serveMetrics() (*http.Server, error) {
	if a.cfg.MetricsAddr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", a.cfg.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("METRICS_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics listener stopped", "err", err)
		}
	}()
	a.log.Info("metrics served", "addr", ln.Addr().String())
	return srv, nil
}
