package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"parla/providers"
)

// sweeper removes what has lapsed, judged by the book's clock: results past their link's
// 10 days, unpaid orders, unpaid uploads, scratch files of killed jobs and old event ids.
type sweeper struct {
	cfg     Config
	orders  *Store
	events  *eventRows
	uploads *Uploads
	storage providers.Storage
	log     *slog.Logger
	erasure *erasure
}

// SweepReport counts what one sweep removed.
type SweepReport struct {
	Results      int // expired results deleted from storage
	Unpaid       int // unpaid orders expired
	ScratchFiles int // leftover scratch files deleted
	Uploads      int // unpaid uploads deleted
}

// Sweep deletes expired results, expires stale unpaid orders and removes leftover
// uploads and scratch files.
func (s *sweeper) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	now := s.cfg.Now()
	var errs []error
	n, err := s.results(ctx, now)
	rep.Results = n
	errs = append(errs, err)
	unpaid, err := s.orders.StaleUnpaid(ctx, now.Add(-s.cfg.UnpaidTTL))
	if err != nil {
		return rep, err
	}
	for _, o := range unpaid {
		if ok, err := s.orders.Expire(ctx, o.ID); err != nil {
			errs = append(errs, err)
		} else if ok {
			rep.Unpaid++
		}
	}
	rep.Uploads, err = s.uploads.sweep(ctx, now.Add(-s.cfg.UploadTTL))
	errs = append(errs, err)
	if s.cfg.LowDisk != nil && s.cfg.LowDisk() {
		n, err := s.uploads.sweepIdle(ctx)
		rep.Uploads += n
		errs = append(errs, err)
	}
	rep.ScratchFiles, err = sweepDir(s.cfg.TempDir, now.Add(-s.cfg.TempTTL))
	errs = append(errs, err)
	errs = append(errs, s.events.DeleteBefore(ctx, now.Add(-7*24*time.Hour)))
	if rep != (SweepReport{}) {
		s.log.Info("swept", "results", rep.Results, "unpaid", rep.Unpaid, "scratch", rep.ScratchFiles,
			"uploads", rep.Uploads)
	}
	return rep, errors.Join(errs...)
}

// results deletes the files of delivered orders whose link has lapsed.
func (s *sweeper) results(ctx context.Context, now time.Time) (int, error) {
	expired, err := s.orders.ExpiredResults(ctx, now)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, o := range expired {
		if err := s.erasure.erase(ctx, o.ID, o.ResultKey); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	orphans, err := s.erasure.orphans(ctx)
	if orphans > 0 {
		s.log.Info("removed files no order serves", "files", orphans)
	}
	return n, errors.Join(append(errs, err)...)
}

// sweepDir deletes regular files in dir last modified before cutoff.
func sweepDir(dir string, cutoff time.Time) (int, error) {
	if dir == "" {
		return 0, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("sweeping %s: %w", dir, err)
	}
	n := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
			n++
		}
	}
	return n, nil
}
