// Package jobs is the order book's durable queue, on River: one fulfilment job per paid
// order, one refund job per order given up, the periodic sweep; the nodes of a cluster,
// their heartbeats and this node's lease; the operator's job controls; and every query on
// River's tables. The order book hands it plain handlers (Handlers) and never sees River:
// the workers here are the only place a handler's result becomes River's cancel, snooze or
// retry.
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// Config tunes the queue; the order book fills it from its own Config, defaults applied.
type Config struct {
	NodeID        string        // this process in River's attempted_by and the heartbeats
	Workers       int           // concurrent jobs
	MaxAttempts   int           // fulfilment tries before the order is given up
	RetryBase     time.Duration // first retry delay, doubled each time
	PollInterval  time.Duration // how often workers look for jobs
	JobTimeout    time.Duration // longest a single job may run
	RescueAfter   time.Duration // how long a job may run before River's rescuer takes it
	SweepInterval time.Duration // how often the sweep job is inserted
	// ReconcileInterval is how often the reconciler's job is inserted.
	ReconcileInterval time.Duration
	// HeartbeatEvery and NodeDeadAfter time a cluster's nodes (nodes.go); 0: the defaults.
	HeartbeatEvery, NodeDeadAfter time.Duration
}

// orderJob is an order's job: its id, and how many times the job was queued again under a
// new key (a takeover from a node that died, takeover.go; the reconciler or the operator's
// retry, Requeue; 0 is left out, so a first job's arguments are its order alone).
type orderJob struct {
	OrderID  string `json:"order_id"`
	Takeover int    `json:"takeover,omitempty"`
}

// fulfilArgs is the job that produces and delivers a paid order.
type fulfilArgs orderJob

// Kind names the job in River's table.
func (fulfilArgs) Kind() string { return kindFulfil }

// InsertOpts makes the job unique per order for good: a second insert, from the webhook
// and the confirmation page racing, is a no-op even after the first job completed.
func (fulfilArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// refundArgs refunds an order given up and tells the visitor.
type refundArgs orderJob

// Kind names the job in River's table.
func (refundArgs) Kind() string { return kindRefund }

// RefundAttempts is how often a refund job is tried: with the doubling retry (capped at an
// hour) and the default RetryBase of 5 s, about ten hours, so that a payment provider's
// outage delays a refund rather than ending its job; the reconciler queues a new one for
// a failed order whose job ended anyway.
const RefundAttempts = 20

// InsertOpts makes the refund unique per order while it is unfinished: a refund job that
// ended (done, or finding the order retried by the operator) must not keep a later give-up
// of the same order from queueing its own. Two never run at once, and the refund itself is
// idempotent per order (the claim on a failed order, the provider's key).
func (refundArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: RefundAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinishedStates}}
}

// unfinishedStates are the states of a job River has not finished.
var unfinishedStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

// sweepArgs runs the periodic sweep.
type sweepArgs struct{}

// Kind names the job in River's table.
func (sweepArgs) Kind() string { return "sweep" }

// reconcileArgs runs the periodic reconciler.
type reconcileArgs struct{}

// Kind names the job in River's table.
func (reconcileArgs) Kind() string { return "reconcile" }

// InsertOpts runs one pass at a time, each tried once: a pass that failed is followed by
// the next period's, never by a pile of retries.
func (reconcileArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: unfinishedStates}}
}

// The job kinds of an order, as River's table names them.
const (
	kindFulfil = "fulfil"
	kindRefund = "refund"
)

// riverClient is the part of River's client the queue uses; its type parameter (the
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

// Queue is River's client on the app's database, with this node's heartbeat.
type Queue struct {
	client riverClient
	db     *sqldb.DB
	nodes  *nodeRows
	// lease is this node's right to start work (lease.go); nil on SQLite, where one
	// process owns the database.
	lease *lease
	log   *slog.Logger
	// stopBeat ends the heartbeat (Postgres); nil before Start or on SQLite.
	stopBeat  func()
	takeovers *takeovers
	// jobTimeout is the longest a run lasts (Config.JobTimeout): LostFulfilments.
	jobTimeout time.Duration
	// letterTries is Config.MaxAttempts, for the refund's letter (refundWorker).
	letterTries int
}

// New migrates River's tables and builds its client with workers that call h, on the
// app's database: River's SQLite driver, or its pgx driver on Postgres. Jobs left running
// by a dead process are made available again (reclaimOrphans).
func New(ctx context.Context, cfg Config, db *sqldb.DB, h Handlers, log *slog.Logger) (*Queue, error) {
	if err := db.Migrate(ctx, "jobs_migrations", migrations); err != nil {
		return nil, err
	}
	q := &Queue{db: db, log: log, nodes: &nodeRows{db: db, id: cfg.NodeID, boot: randomBoot(),
		every: cfg.HeartbeatEvery, deadAfter: cfg.NodeDeadAfter}, jobTimeout: cfg.JobTimeout, letterTries: cfg.MaxAttempts}
	if db.Dialect == sqldb.Postgres {
		q.lease = &lease{valid: leaseFor(q.nodes.timing())}
		q.nodes.lease = q.lease
	}
	rcfg := riverConfig(cfg, q.workers(h), log)
	var err error
	if db.Dialect == sqldb.Postgres {
		q.client, err = newRiverClient(ctx, db, riverpgxv5.New(db.Pool), rcfg)
	} else {
		q.client, err = newRiverClient(ctx, db, riversqlite.New(db.DB), rcfg)
	}
	if err != nil {
		return nil, err
	}
	q.takeovers = &takeovers{db: db, client: q.client, nodes: q.nodes, log: log}
	if n, err := reclaimOrphans(ctx, db); err != nil {
		return nil, err
	} else if n > 0 {
		log.Warn("jobs left running by a process that died are queued again", "jobs", n)
	}
	return q, nil
}

// riverConfig is River's configuration for cfg, with the workers and the periodic sweep
// and reconciler (inserted by the leader, one node of a cluster; run by any live one).
func riverConfig(cfg Config, workers *river.Workers, log *slog.Logger) *river.Config {
	return &river.Config{
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
		PeriodicJobs:         []*river.PeriodicJob{periodic(cfg.SweepInterval, sweepArgs{}), periodic(cfg.ReconcileInterval, reconcileArgs{})},
	}
}

// periodic is a job inserted every interval, and once at the start.
func periodic(interval time.Duration, args river.JobArgs) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) { return args, nil }, &river.PeriodicJobOpts{RunOnStart: true})
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

// Client is River's client, for River's own UI (riverui) in the admin area: a
// *river.Client[*sql.Tx] on SQLite, a *river.Client[pgx.Tx] on Postgres.
func (q *Queue) Client() any { return q.client }

// Start begins working jobs in the background until Stop. On Postgres the process first
// makes the node's id its own (takeovers.claimID) and beats, so that no other node judges its first
// jobs orphans.
func (q *Queue) Start(ctx context.Context) error {
	if q.db.Dialect == sqldb.Postgres {
		if err := q.takeovers.claimID(ctx); err != nil {
			return err
		}
		if err := q.nodes.beat(ctx); err != nil {
			return err
		}
		hbCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); q.nodes.heartbeat(hbCtx, q.log, q.takeovers.dead, q.takeovers.displaced) }()
		q.stopBeat = func() { cancel(); <-done }
	}
	if err := q.client.Start(ctx); err != nil {
		if q.stopBeat != nil {
			q.stopBeat()
			q.stopBeat = nil
		}
		return fmt.Errorf("starting job queue: %w", err)
	}
	return nil
}

// Stop lets running jobs finish until ctx ends, then cancels them; cancelled jobs go
// back to the queue and run again at the next start.
func (q *Queue) Stop(ctx context.Context) error {
	if q.stopBeat != nil {
		defer q.stopBeat()
	}
	err := q.client.Stop(ctx)
	if err == nil {
		return nil
	}
	cancelCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err2 := q.client.StopAndCancel(cancelCtx); err2 != nil {
		return fmt.Errorf("stopping job queue: %w", errors.Join(err, err2))
	}
	return nil
}

// reclaimOrphans makes the jobs left running by dead processes available again, at boot,
// rather than waiting for River's rescue (RescueAfter). On SQLite one process owns the
// database, so every running job at boot is an orphan: it was killed (a crash, kill -9, a
// power cut). On Postgres other nodes may be running jobs right now: a node judges others
// only by the heartbeat's rule (a run of its own beats without a gap, nodes.go), since at
// boot, right after an outage of the database, the live nodes' beats are stale too.
func reclaimOrphans(ctx context.Context, db *sqldb.DB) (int64, error) {
	if db.Dialect == sqldb.Postgres {
		return 0, nil
	}
	res, err := db.ExecContext(ctx, `UPDATE river_job SET state = 'available' WHERE state = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("reclaiming jobs of a dead process: %w", err)
	}
	return res.RowsAffected()
}

// Fulfil queues the fulfilment of a paid order (once per order, whoever asks).
func (q *Queue) Fulfil(ctx context.Context, orderID string) error {
	if _, err := q.client.Insert(ctx, fulfilArgs{OrderID: orderID}, nil); err != nil {
		return fmt.Errorf("queueing fulfilment of order %s: %w", orderID, err)
	}
	return nil
}

// Refund queues the refund of an order given up.
func (q *Queue) Refund(ctx context.Context, orderID string) error {
	if _, err := q.client.Insert(ctx, refundArgs{OrderID: orderID}, nil); err != nil {
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

// The queue's own tables: the nodes' heartbeats (created by the order book's migrations
// before this package had its own, hence IF NOT EXISTS), with the boot of the process
// that beats under each id.
var migrations = []string{
	`CREATE TABLE IF NOT EXISTS nodes (
		id         TEXT PRIMARY KEY,
		started_at BIGINT NOT NULL,
		seen_at    BIGINT NOT NULL
	);`,
	`ALTER TABLE nodes ADD COLUMN boot TEXT NOT NULL DEFAULT '';`,
}

// randomBoot is a process's boot nonce.
func randomBoot() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
