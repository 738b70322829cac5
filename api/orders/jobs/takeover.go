package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"parla/providers/sqldb"
)

// Taking over the jobs of a node that died (Postgres). River's completer records a job's
// outcome on whatever row is running under the job's id, whoever runs it; so a node
// judged dead that resumes must find nothing of its own left running for the order. A
// takeover therefore never hands the dead node's row to another node: it inserts the job
// again under a new key (the same order, the next takeover: unique by its arguments) and
// completes the old row. The resumed node's outcome lands on its own, finished row and is
// dropped; the new row is the winner's alone. The insert comes first, so a crash between
// the two leaves the old row to the next takeover, whose insert is then a no-op.

// errIDTaken is why a node stops: another live process beats under its id.
var errIDTaken = errors.New("another live process beats under this node's id (NODE_ID must be unique)")

// displaced stops a process whose node id another process took over (errIDTaken, found by
// a heartbeat): its lease lapses for good, so its runs start no engine process and its
// fulfilment jobs are not worked, and its River client stops, cancelling what runs (the
// rightful node has taken those jobs over under new keys). It works nothing until it is
// restarted under an id of its own.
func (q *takeovers) displaced() {
	q.log.Error("stopping all work: another process took over this node's id (NODE_ID must be unique); restart this one under another id",
		"node", q.nodes.id, "holder", q.nodes.holder())
	q.nodes.lease.end()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.client.StopAndCancel(ctx); err != nil {
			q.log.Error("stopping the job queue of a displaced node", "err", err)
		}
	}()
}

// takeovers take over the jobs of dead nodes, and this node's id at its start.
type takeovers struct {
	db     *sqldb.DB
	client riverClient
	nodes  *nodeRows
	log    *slog.Logger
}

// orphan is a running job of a dead node.
type orphan struct {
	id   int64
	kind string
	args []byte
}

// dead takes over the running jobs of nodes whose heartbeat is older than the
// death timeout.
func (q *takeovers) dead(ctx context.Context) (int64, error) {
	_, deadAfter := q.nodes.timing()
	return q.takeOver(ctx, deadNodesJobs, deadAfter.Milliseconds())
}

// takeOver takes over the running jobs the query selects (id, kind, args).
func (q *takeovers) takeOver(ctx context.Context, query string, args ...any) (int64, error) {
	orphans, err := sqldb.QueryAll(ctx, q.db, func(row sqldb.Scanner) (orphan, error) {
		var o orphan
		return o, row.Scan(&o.id, &o.kind, &o.args)
	}, query, args...)
	if err != nil {
		return 0, fmt.Errorf("finding the jobs of dead nodes: %w", err)
	}
	var n int64
	var errs []error
	for _, o := range orphans {
		taken, err := q.takeOverOne(ctx, o)
		if err != nil {
			errs = append(errs, err)
		} else if taken {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// takeOverOne inserts an order's job again under its next takeover and completes the
// dead node's row; any other job (the sweep) is made available again.
func (q *takeovers) takeOverOne(ctx context.Context, o orphan) (bool, error) {
	var next river.JobArgs
	var a orderJob
	if o.kind == kindFulfil || o.kind == kindRefund {
		if err := json.Unmarshal(o.args, &a); err != nil {
			return false, fmt.Errorf("reading job %d: %w", o.id, err)
		}
		a.Takeover++
		next = fulfilArgs(a)
		if o.kind == kindRefund {
			next = refundArgs(a)
		}
	}
	if next == nil {
		return q.db.Changed(ctx, "making job available again",
			`UPDATE river_job SET state = 'available', scheduled_at = now() WHERE id = ? AND state = 'running'`, o.id)
	}
	if _, err := q.client.Insert(ctx, next, nil); err != nil {
		return false, fmt.Errorf("queueing the %s job of order %s again: %w", o.kind, a.OrderID, err)
	}
	return q.db.Changed(ctx, "completing a dead node's job",
		`UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = ? AND state = 'running'`, o.id)
}

// claimID makes this process the node of its id (Postgres) before it works. A row under
// the id that beats on (its seen_at advancing over two beats) is another live process:
// start refused. A row that does not is this node's previous life (a crash, a kill): its
// running jobs are taken over at once, not after the death timeout, and the row is this
// boot's from now on.
func (q *takeovers) claimID(ctx context.Context) error {
	seen, err := q.nodes.seenAt(ctx)
	if err != nil || seen < 0 {
		return err
	}
	every, _ := q.nodes.timing()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(2*every + every/2):
	}
	again, err := q.nodes.seenAt(ctx)
	if err != nil {
		return err
	}
	if again != seen {
		return fmt.Errorf("%w: %s", errIDTaken, q.nodes.id)
	}
	n, err := q.takeOver(ctx, `SELECT id, kind, args FROM river_job
		WHERE state = 'running' AND attempted_by[array_length(attempted_by, 1)] = ?`, q.nodes.id)
	if n > 0 {
		q.log.Warn("jobs this node ran before it restarted are queued again", "jobs", n)
	}
	if err != nil {
		return err
	}
	return q.db.Update(ctx, "taking over the node id "+q.nodes.id,
		`UPDATE nodes SET boot = ?, started_at = `+dbMillis+`, seen_at = `+dbMillis+` WHERE id = ?`, q.nodes.boot, q.nodes.id)
}

// seenAt is when the node's id last beat (the database's clock, in ms); -1 when it has no row.
func (n *nodeRows) seenAt(ctx context.Context) (int64, error) {
	var seen int64
	err := n.db.QueryRowContext(ctx, `SELECT seen_at FROM nodes WHERE id = ?`, n.id).Scan(&seen)
	if errors.Is(err, sql.ErrNoRows) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the heartbeat of node %s: %w", n.id, err)
	}
	return seen, nil
}
