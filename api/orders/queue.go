package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"parla/providers/sqldb"
)

// The durable jobs, on River: one fulfilment per paid order, one refund per order that
// failed for good, and the periodic sweep.

// FulfilArgs is the one job that produces and delivers a paid order.
type FulfilArgs struct {
	OrderID string `json:"order_id"`
}

// Kind names the job in River's table.
func (FulfilArgs) Kind() string { return "fulfil" }

// InsertOpts makes the job unique per order for good: a second insert, from the webhook
// and the confirmation page racing, is a no-op even after the first job completed.
func (FulfilArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// RefundArgs refunds an order whose fulfilment failed for good and tells the visitor.
type RefundArgs struct {
	OrderID string `json:"order_id"`
}

// Kind names the job in River's table.
func (RefundArgs) Kind() string { return "refund" }

// InsertOpts makes the refund unique per order.
func (RefundArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// SweepArgs runs the periodic sweep.
type SweepArgs struct{}

// Kind names the job in River's table.
func (SweepArgs) Kind() string { return "sweep" }

// riverClient is the part of River's client the book uses; its type parameter (the
// driver's transaction) differs between SQLite and Postgres, these methods do not.
type riverClient interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	JobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
}

// jobQueue is River's client on the app's database.
type jobQueue struct {
	client riverClient
	db     *sqldb.DB // River's tables, for the queue position of a waiting order
	nodes  *nodeRows
}

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

// newRiverClient migrates River's tables through driver (one node at a time) and builds
// the client.
func newRiverClient[TTx any](ctx context.Context, db *sqldb.DB, driver riverdriver.Driver[TTx], cfg *river.Config) (riverClient, error) {
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return nil, fmt.Errorf("preparing job queue migrations: %w", err)
	}
	err = db.Locked(ctx, "migrate river", func() error {
		_, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("migrating job queue: %w", err)
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("building job queue: %w", err)
	}
	return client, nil
}

// reclaimOrphans makes the jobs left running by dead processes available again, at boot,
// rather than waiting for River's rescue (RescueAfter). On SQLite one process owns the
// database, so every running job at boot is an orphan: it was killed (a crash, kill -9, a
// power cut). On Postgres other nodes may be running jobs right now: only the jobs whose
// node has not been seen alive lately (nodes.go) are taken. Every fulfilment step checks
// the order's row first, so the job resumes where it stopped and delivers once.
func (q *jobQueue) reclaimOrphans(ctx context.Context) (int64, error) {
	if q.db.Dialect != sqldb.Postgres {
		res, err := q.db.ExecContext(ctx, `UPDATE river_job SET state = 'available' WHERE state = 'running'`)
		if err != nil {
			return 0, fmt.Errorf("reclaiming jobs of a dead process: %w", err)
		}
		return res.RowsAffected()
	}
	// On Postgres a node judges others only by the heartbeat's rule (a run of its own
	// beats without a gap, nodes.go): at boot, right after an outage of the database, the
	// live nodes' beats are stale too, and taking their jobs would run them twice.
	return 0, nil
}

// fulfil queues the fulfilment of a paid order (once per order, whoever asks).
func (q *jobQueue) fulfil(ctx context.Context, orderID string) error {
	if _, err := q.client.Insert(ctx, FulfilArgs{OrderID: orderID}, nil); err != nil {
		return fmt.Errorf("queueing fulfilment of order %s: %w", orderID, err)
	}
	return nil
}

// refund queues the refund of an order that failed for good.
func (q *jobQueue) refund(ctx context.Context, orderID string) error {
	if _, err := q.client.Insert(ctx, RefundArgs{OrderID: orderID}, nil); err != nil {
		return fmt.Errorf("queueing refund of order %s: %w", orderID, err)
	}
	return nil
}

// doublingRetry waits base, 2×base, 4×base… (capped at an hour) between attempts.
type doublingRetry struct {
	base time.Duration
}

func (r doublingRetry) NextRetry(job *rivertype.JobRow) time.Time {
	d := r.base
	for i := 1; i < job.Attempt && d < time.Hour; i++ {
		d *= 2
	}
	return time.Now().Add(min(d, time.Hour))
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
