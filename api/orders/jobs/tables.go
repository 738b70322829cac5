package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"parla/providers/sqldb"
)

// Every query on River's tables: the orders whose fulfilment River gave up, a waiting
// order's place in the queue, and the queue's gauges. TestGaugeQueriesUseIndexes holds
// the gauges' to an index.

// LostFulfilments lists the orders in one of the open statuses whose newest fulfilment
// job (a takeover inserts a newer one) is discarded or cancelled: River gave up on them in ways that never reach the
// worker's last-attempt GiveUp (its rescuer discards a job found stuck on its last
// attempt; an operator may cancel or discard one in River's UI). In a cluster the order is
// not lost while a live node holds its claim and the job was attempted less than
// JobTimeout ago: that run may still deliver, its row having been finished under it (River's
// rescuer hands a job that overran RescueAfter to another node on the same row, and the
// stale runner's outcome lands there: River's completer checks only that the row is
// running). Past JobTimeout no run of that attempt is going, and the order is lost though
// its claimant lives. The state filter comes first: River indexes jobs by state.
func (q *Queue) LostFulfilments(ctx context.Context, open ...string) ([]string, error) {
	mayStillRun, args := "", []any{}
	for _, s := range open {
		args = append(args, s)
	}
	if q.db.Dialect == sqldb.Postgres {
		_, deadAfter := q.nodes.timing()
		mayStillRun = ` AND NOT (j.attempted_at IS NOT NULL AND j.attempted_at > clock_timestamp() - make_interval(secs => ?)
		                 AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = o.claimed_by AND n.seen_at > ` + dbMillis + ` - ?))`
		args = append(args, q.jobTimeout.Seconds(), deadAfter.Milliseconds())
	}
	return sqldb.QueryAll(ctx, q.db, func(row sqldb.Scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT o.id FROM orders o
		WHERE o.status IN (`+placeholders(len(open))+`) AND `+newestGivenUp(q.db.Dialect, mayStillRun), args...)
}

// newestGivenUp is the SQL condition that order o's newest fulfilment job j is discarded or
// cancelled, and that j meets extra ("" or " AND …"). The state filter comes first: River
// indexes jobs by state.
func newestGivenUp(d sqldb.Dialect, extra string) string {
	orderOf, newerOf := d.JSONText("j.args", "order_id"), d.JSONText("k.args", "order_id")
	return `EXISTS (SELECT 1 FROM river_job j WHERE j.state IN ('discarded', 'cancelled')
		                AND j.kind = 'fulfil' AND ` + orderOf + ` = o.id
		                AND NOT EXISTS (SELECT 1 FROM river_job k WHERE k.kind = 'fulfil' AND k.id > j.id
		                                  AND ` + newerOf + ` = o.id)` + extra + `)`
}

// Unrun lists the orders no fulfilment job will run: paid (since before paidBefore, in
// ms) or processing, with no unfinished fulfilment job. A processing one whose newest job
// River gave up on is LostFulfilments' to judge (its claimant may still deliver), not this.
func (q *Queue) Unrun(ctx context.Context, paid, processing string, paidBefore int64) ([]string, error) {
	return q.Jobless(ctx, kindFulfil, `(o.status = ? AND o.paid_at < ? OR o.status = ? AND NOT `+newestGivenUp(q.db.Dialect, "")+`)`,
		paid, paidBefore, processing)
}

// placeholders is n "?" separated by commas.
func placeholders(n int) string {
	s := ""
	for i := range n {
		if i > 0 {
			s += ", "
		}
		s += "?"
	}
	return s
}

// Position is a paid order's place among the fulfilments waiting for a worker: 1 when it
// is next, 0 when its job is not waiting. Two small queries: the order's own waiting job,
// then the fulfilment jobs available before it.
func (q *Queue) Position(ctx context.Context, orderID string) (int, error) {
	var id int64
	err := q.db.QueryRowContext(ctx,
		`SELECT id FROM river_job
		  WHERE kind = 'fulfil' AND state IN ('available', 'scheduled', 'retryable')
		    AND `+q.db.Dialect.JSONText("args", "order_id")+` = ?
		  ORDER BY id DESC LIMIT 1`, orderID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("finding the job of order %s: %w", orderID, err)
	}
	var ahead int
	err = q.db.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM river_job WHERE kind = 'fulfil' AND state = 'available' AND id < ?`, id).Scan(&ahead)
	if err != nil {
		return 0, fmt.Errorf("counting the jobs before order %s: %w", orderID, err)
	}
	return ahead + 1, nil
}

// Gauges is the queue's state at one moment, read when metrics are scraped.
type Gauges struct {
	// States counts River's unfinished jobs by state (available, scheduled, retryable,
	// running), every kind together.
	States map[string]int64
	// OldestAvailable is when the job waiting longest for a worker became available;
	// OldestRunning is when the longest-running job started its attempt. Zero: none.
	OldestAvailable, OldestRunning time.Time
}

// unfinished are the states of River jobs that are not finished.
var unfinished = []any{"available", "scheduled", "retryable", "running"}

// The gauges' SQL; TestGaugeQueriesUseIndexes (in the order book) holds each to an index.
const (
	StatesSQL = `SELECT state, COUNT(*) FROM river_job WHERE state IN (?, ?, ?, ?) GROUP BY state`
	// The column itself, not MIN(): SQLite types a timestamp by its column, so an
	// aggregate would come back as text.
	OldestAvailableSQL = `SELECT scheduled_at FROM river_job WHERE state = ? ORDER BY scheduled_at LIMIT 1`
	OldestRunningSQL   = `SELECT attempted_at FROM river_job WHERE state = ? AND attempted_at IS NOT NULL
		ORDER BY attempted_at LIMIT 1`
)

// Gauges reads the queue's gauges: three small queries (above), each on River's
// river_job_prioritized_fetching_index, whose first column is the state, so they cost the
// same with 100 or 100,000 jobs kept.
func (q *Queue) Gauges(ctx context.Context) (Gauges, error) {
	g := Gauges{States: map[string]int64{}}
	rows, err := q.db.QueryContext(ctx, StatesSQL, unfinished...)
	if err != nil {
		return g, fmt.Errorf("counting jobs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			return g, fmt.Errorf("counting jobs: %w", err)
		}
		g.States[state] = n
	}
	if err := rows.Err(); err != nil {
		return g, fmt.Errorf("counting jobs: %w", err)
	}
	rows.Close()
	for _, o := range []struct {
		sql, state string
		into       *time.Time
	}{{OldestAvailableSQL, "available", &g.OldestAvailable}, {OldestRunningSQL, "running", &g.OldestRunning}} {
		var t sql.NullTime
		err := q.db.QueryRowContext(ctx, o.sql, o.state).Scan(&t)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return g, fmt.Errorf("finding the oldest %s job: %w", o.state, err)
		}
		if t.Valid {
			*o.into = t.Time
		}
	}
	return g, nil
}

// nextKey is the next key (orderJob.Takeover) of an order's fulfilment: one past the
// highest its jobs in River's table had, 0 when it has none.
func nextKey(ctx context.Context, db *sqldb.DB, orderID string) (int, error) {
	var next int
	err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(CAST(COALESCE(`+db.Dialect.JSONText("args", "takeover")+`, '0') AS INTEGER)) + 1, 0)
		FROM river_job WHERE kind = ? AND `+db.Dialect.JSONText("args", "order_id")+` = ?`, kindFulfil, orderID).Scan(&next)
	if err != nil {
		return 0, fmt.Errorf("reading the jobs of order %s: %w", orderID, err)
	}
	return next, nil
}

// Jobless lists the orders that where selects (a condition on orders o, with args) and
// that have no unfinished job of kind (fulfil, refund): the reconciler's finds. The
// state filter comes first: River indexes jobs by state.
func (q *Queue) Jobless(ctx context.Context, kind, where string, args ...any) ([]string, error) {
	all := append(append(append([]any{}, args...), unfinished...), kind)
	return sqldb.QueryAll(ctx, q.db, func(row sqldb.Scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT o.id FROM orders o WHERE `+where+`
		  AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.state IN (`+placeholders(len(unfinished))+`)
		                    AND j.kind = ? AND `+q.db.Dialect.JSONText("j.args", "order_id")+` = o.id)`,
		all...)
}
