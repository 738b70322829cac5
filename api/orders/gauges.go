package orders

import (
	"context"
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

// The open orders' SQL; TestGaugeQueriesUseIndexes holds it (and the queue's) to an index.
const openOrdersSQL = `SELECT service, status, COUNT(*), MIN(paid_at) FROM orders
		WHERE status IN (?, ?) GROUP BY service, status`

// Gauges reads the order book's gauges: the open orders (one query on the index
// orders_status_created) and the queue's (jobs.Queue.Gauges), portable between SQLite and
// Postgres. They read the open orders and jobs only, so they cost the same with 100 or
// 100,000 orders kept.
func (b *Book) Gauges(ctx context.Context) (Gauges, error) {
	var g Gauges
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

	q, err := b.queue.Gauges(ctx)
	if err != nil {
		return g, err
	}
	g.Jobs, g.OldestAvailable, g.OldestRunning = q.States, q.OldestAvailable, q.OldestRunning
	return g, nil
}
