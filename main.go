// Command parla serves the Parla web site: the API, the React app and the workers that
// fulfil paid orders. Configuration comes from the environment (see README.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"parla/api"
)

// Version is the label in the footer.
const Version = "v3.3.2"

// main runs the command named by the first argument (commands.go), or else the server:
// run reads the configuration, builds every part (wire.go) and serves until a signal (Run).
func main() {
	if len(os.Args) > 1 {
		if cmd, ok := commands[os.Args[1]]; ok {
			os.Exit(cmd())
		}
	}
	os.Exit(run(nil))
}

// run starts the server from the environment and serves until a signal; it returns the
// process's exit code. checkpoint, nil in the product, is called at each fulfilment step
// (tests crash the process there).
func run(checkpoint func(orderID, step string)) int {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "parla: configuration is not valid:\n%v\n", err)
		return 2
	}
	cfg.checkpoint = checkpoint
	log := newLogger(cfg)
	if soft, hard, err := raiseFileLimit(); err != nil {
		log.Warn("cannot raise the open-files limit", "soft", soft, "hard", hard, "err", err)
	} else {
		log.Info("open-files limit", "soft", soft, "hard", hard)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	app, err := build(ctx, cfg, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	app.reportClosed(os.Stderr)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		log.Error("cannot listen", "addr", cfg.Addr, "err", err)
		return 1
	}
	if err := app.Run(ctx, ln); err != nil {
		log.Error("stopped with an error", "err", err)
		return 1
	}
	return 0
}

// Run serves on ln and works jobs until ctx ends, then shuts down in order: stop taking
// requests, let running jobs finish (or put them back), close the database.
func (a *App) Run(ctx context.Context, ln net.Listener) error {
	// The queue gets its own context: a signal must let running jobs finish (Stop below),
	// not cut them off.
	if err := a.book.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	metricsSrv, err := a.serveMetrics()
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	guarded := api.NewListener(ln, api.DefaultPerAddress, a.log)
	go func() { served <- a.http.Listener(guarded) }()
	a.log.Info("parla is up", "addr", ln.Addr().String(), "public_url", redactURL(a.cfg.PublicURL),
		"tts", a.cfg.TTSEngine, "storage", a.cfg.Storage, "payments", a.cfg.PaymentMode(),
		"database", a.db.Dialect.String(), "node", a.book.Config().NodeID)
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	a.log.Info("shutting down")
	errs := []error{serveErr}
	if err := a.http.ShutdownWithTimeout(10 * time.Second); err != nil {
		errs = append(errs, fmt.Errorf("stopping HTTP: %w", err))
	}
	if metricsSrv != nil {
		if err := metricsSrv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the metrics listener: %w", err))
		}
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownGrace)
	defer cancel()
	if err := a.book.Stop(stopCtx); err != nil {
		errs = append(errs, err)
	}
	if err := a.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing database: %w", err))
	}
	for _, c := range a.closers {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
