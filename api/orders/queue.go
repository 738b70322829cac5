package orders

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
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
