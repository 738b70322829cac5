package orders

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"parla/providers/sqldb"
)

// The queue's workers: what each job kind runs (the fulfiller's fulfilment and refund,
// the sweeper's sweep), and River's client built with them on the app's database.

// newJobQueue migrates River's tables and builds its client with the book's workers, on
// the app's database: River's SQLite driver, or its pgx driver on Postgres.
func newJobQueue(ctx context.Context, cfg Config, db *sqldb.DB, f *fulfiller, sw *sweeper, log *slog.Logger) (*jobQueue, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &fulfilWorker{f: f})
	river.AddWorker(workers, &refundWorker{f: f})
	river.AddWorker(workers, &sweepWorker{sw: sw})
	rcfg := &river.Config{
		ID:                   cfg.NodeID,
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:              workers,
		MaxAttempts:          cfg.MaxAttempts,
		RetryPolicy:          doublingRetry{base: cfg.RetryBase},
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        min(cfg.PollInterval, 20*time.Millisecond),
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		Logger:               log.With("component", "river"),
		// The leader (one node of a cluster) inserts the periodic sweep.
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(
			river.PeriodicInterval(cfg.SweepInterval),
			func() (river.JobArgs, *river.InsertOpts) { return SweepArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true},
		)},
	}
	var client riverClient
	var err error
	if db.Dialect == sqldb.Postgres {
		client, err = newRiverClient(ctx, db, riverpgxv5.New(db.Pool), rcfg)
	} else {
		client, err = newRiverClient(ctx, db, riversqlite.New(db.DB), rcfg)
	}
	if err != nil {
		return nil, err
	}
	q := &jobQueue{client: client, db: db, nodes: &nodeRows{db: db, id: cfg.NodeID}}
	if n, err := q.reclaimOrphans(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		log.Warn("jobs left running by a process that died are queued again", "jobs", n)
	}
	return q, nil
}

type fulfilWorker struct {
	river.WorkerDefaults[FulfilArgs]
	f *fulfiller
}

func (w *fulfilWorker) Work(ctx context.Context, job *river.Job[FulfilArgs]) error {
	err := w.f.fulfil(ctx, job.Args.OrderID)
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrClaimLost) {
		// Another runner holds the order, or it was refunded or erased: no retry, and
		// above all no refund of what the other delivers.
		w.f.log.Warn("fulfilment ends: the order is no longer this runner's", "order", job.Args.OrderID, "err", err)
		return river.JobCancel(err)
	}
	if snooze := (*river.JobSnoozeError)(nil); errors.As(err, &snooze) {
		return err // this node's lease lapsed: the job waits for a node that beats
	}
	return w.retryOrGiveUp(ctx, job, err)
}

// retryOrGiveUp lets River retry a failed fulfilment, or refunds the order when the
// failure is permanent or the last attempt failed.
func (w *fulfilWorker) retryOrGiveUp(ctx context.Context, job *river.Job[FulfilArgs], err error) error {
	log := w.f.log.With("order", job.Args.OrderID, "attempt", job.Attempt)
	var pe *permanentError
	if errors.As(err, &pe) {
		log.Error("fulfilment cannot succeed, refunding", "err", err)
		return w.giveUpRun(ctx, job.Args.OrderID, err)
	}
	if job.Attempt < job.MaxAttempts {
		if ctx.Err() == nil {
			log.Warn("fulfilment failed, will retry", "err", err)
		}
		return err // or shutting down: the job goes back to the queue
	}
	log.Error("fulfilment failed for good, refunding", "err", err)
	return w.giveUpRun(ctx, job.Args.OrderID, err)
}

type refundWorker struct {
	river.WorkerDefaults[RefundArgs]
	f *fulfiller
}

func (w *refundWorker) Work(ctx context.Context, job *river.Job[RefundArgs]) error {
	return w.f.refund(ctx, job.Args.OrderID, job.Attempt >= job.MaxAttempts)
}

type sweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	sw *sweeper
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[SweepArgs]) error {
	_, err := w.sw.Sweep(ctx)
	return err
}
