package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Gauges is the state of the order book and its queue at one moment, read when metrics are
// scraped.
type Gauges struct {
	// Orders counts the paid orders not yet done, per service and status (paid: waiting
	// for a worker; processing: being produced or waiting for a retry), with the payment
	// time of the oldest.
	Orders []OrderGauge
	// Jobs counts River's unfinished jobs by state (available, scheduled, retryable,
	// running), every kind together.
	Jobs map[string]int64
	// OldestAvailable is when the job waiting longest for a worker became available;
	// OldestRunning is when the longest-running job started its attempt. Zero: none.
	OldestAvailable, OldestRunning time.Time
}

// OrderGauge is the count of one service's orders in one status.
type OrderGauge struct {
	Service    Service
	Status     Status
	Count      int64
	OldestPaid time.Time
}

// jobStates are the states of River jobs that are not finished.
var jobStates = []string{"available", "scheduled", "retryable", "running"}

// The gauges' SQL, all of it; TestGaugeQueriesUseIndexes holds each to an index.
const (
	openOrdersSQL = `SELECT service, status, COUNT(*), MIN(paid_at) FROM orders
		WHERE status IN (?, ?) GROUP BY service, status`
	jobStatesSQL = `SELECT state, COUNT(*) FROM river_job WHERE state IN (?, ?, ?, ?) GROUP BY state`
	// The column itself, not MIN(): SQLite types a timestamp by its column, so an
	// aggregate would come back as text.
	oldestAvailableSQL = `SELECT scheduled_at FROM river_job WHERE state = ? ORDER BY scheduled_at LIMIT 1`
	oldestRunningSQL   = `SELECT attempted_at FROM river_job WHERE state = ? AND attempted_at IS NOT NULL
		ORDER BY attempted_at LIMIT 1`
)

// Gauges reads the order book's gauges: four small queries (above), each on an index
// (orders_status_created; River's river_job_prioritized_fetching_index, whose first
// column is the state), portable between SQLite and Postgres. They read the open orders
// and jobs only, so they cost the same with 100 or 100,000 orders kept.
func (b *Book) Gauges(ctx context.Context) (Gauges, error) {
	g := Gauges{Jobs: map[string]int64{}}
	rows, err := b.db.QueryContext(ctx, openOrdersSQL, Paid, Processing)
	if err != nil {
		return g, fmt.Errorf("counting open orders: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var og OrderGauge
		var oldest int64
		if err := rows.Scan(&og.Service, &og.Status, &og.Count, &oldest); err != nil {
			return g, fmt.Errorf("counting open orders: %w", err)
		}
		og.OldestPaid = fromMillis(oldest)
		g.Orders = append(g.Orders, og)
	}
	if err := rows.Err(); err != nil {
		return g, fmt.Errorf("counting open orders: %w", err)
	}
	rows.Close()

	jobs, err := b.db.QueryContext(ctx, jobStatesSQL, jobStates[0], jobStates[1], jobStates[2], jobStates[3])
	if err != nil {
		return g, fmt.Errorf("counting jobs: %w", err)
	}
	defer jobs.Close()
	for jobs.Next() {
		var state string
		var n int64
		if err := jobs.Scan(&state, &n); err != nil {
			return g, fmt.Errorf("counting jobs: %w", err)
		}
		g.Jobs[state] = n
	}
	if err := jobs.Err(); err != nil {
		return g, fmt.Errorf("counting jobs: %w", err)
	}
	jobs.Close()

	for _, q := range []struct {
		sql, state string
		into       *time.Time
	}{{oldestAvailableSQL, "available", &g.OldestAvailable}, {oldestRunningSQL, "running", &g.OldestRunning}} {
		var t sql.NullTime
		err := b.db.QueryRowContext(ctx, q.sql, q.state).Scan(&t)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return g, fmt.Errorf("finding the oldest %s job: %w", q.state, err)
		}
		if t.Valid {
			*q.into = t.Time
		}
	}
	return g, nil
}
