package orders

import (
	"context"
	"testing"
	"time"

	"parla/api/orders/jobs"
	"parla/providers/sqldb"
	"parla/providers/testkit"
)

// A running node takes over the job of a node that stops beating within seconds (not at
// its next boot, not after River's rescue delay), and never the job of a live node.
func TestLiveNodeTakesOverADeadNodesJobWithinSeconds(t *testing.T) {
	f, co := runningOnAnotherNode(t, "other-node")
	db, ctx := f.book.Desk.orders.db, context.Background()
	// The other node beats as a live node does, until it dies.
	alive, die := context.WithCancel(ctx)
	defer die()
	go func() {
		beats := time.NewTicker(heartbeatEvery)
		defer beats.Stop()
		for alive.Err() == nil {
			db.ExecContext(alive, `UPDATE nodes SET seen_at = `+dbMillis+` WHERE id = 'other-node'`)
			select {
			case <-alive.Done():
			case <-beats.C:
			}
		}
	}()
	f.restart(t) // this node runs, beats and judges the others

	// The live node's job stays its own through several of this node's heartbeats, well
	// past the time a dead node's job would take.
	window := time.After(nodeDeadAfter + 3*heartbeatEvery)
	checks := time.NewTicker(heartbeatEvery / 2)
	defer checks.Stop()
	for live := true; live; {
		select {
		case <-window:
			live = false
		case <-checks.C:
			var state string
			if err := db.QueryRowContext(ctx, `SELECT state FROM river_job WHERE kind = 'fulfil'`).Scan(&state); err != nil || state != "running" {
				t.Fatalf("a live node's job is %q (%v), want running", state, err)
			}
		}
	}

	// The other node dies (its heartbeats stop, its row stays): this node delivers its order.
	die()
	died := time.Now()
	var o Order
	delivered := testkit.WaitFor(nodeDeadAfter+5*heartbeatEvery, func() bool {
		o, _ = f.book.orders.Get(ctx, co.OrderID)
		return o.Status == Done
	})
	if !delivered {
		t.Fatalf("the dead node's order is %s %s after its death", o.Status, time.Since(died).Round(time.Second))
	}
	took := time.Since(died)
	t.Logf("death to delivery: %s (dead after %s, heartbeat every %s)", took.Round(100*time.Millisecond), nodeDeadAfter, heartbeatEvery)
	if o.LinkToken == "" || len(f.mails(t)) != 1 {
		t.Errorf("after the dead node's job was taken: %+v, %d mails", o, len(f.mails(t)))
	}
}

// runningOnAnotherNode makes a paid order whose job is running on node (as River records
// it), with this fixture's book stopped and node's heartbeat fresh; Postgres only.
func runningOnAnotherNode(t *testing.T, node string) (*fixture, Checkout) {
	t.Helper()
	f := newFixture(t, nil)
	if f.book.Desk.orders.db.Dialect != sqldb.Postgres {
		t.Skip("several nodes share only a Postgres database (PARLA_TEST_DB=postgres)")
	}
	co := f.paidStopped(t, "Running on another node.")
	f.exec(t, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(), attempted_by = ARRAY[?] WHERE kind = 'fulfil'`, node)
	f.exec(t, `UPDATE orders SET status = 'processing' WHERE id = ?`, co.OrderID)
	f.exec(t, `INSERT INTO nodes (id, started_at, seen_at) VALUES (?, `+dbMillis+`, `+dbMillis+`)`, node)
	return f, co
}

// The cluster's timing and the database's clock, as the queue's nodes use them
// (jobs/nodes.go).
const (
	heartbeatEvery  = jobs.DefaultHeartbeatEvery
	nodeDeadAfter   = jobs.DefaultNodeDeadAfter
	judgeAfterBeats = jobs.JudgeAfterBeats
	dbMillis        = `(extract(epoch from clock_timestamp()) * 1000)::bigint`
)
