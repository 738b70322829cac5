package jobs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parla/providers/sqldb"
	"parla/providers/testkit"
)

// fulfilRows are the fulfilment jobs, oldest first: state, order and key.
func fulfilRows(t *testing.T, q *Queue) []string {
	t.Helper()
	rows, err := q.db.QueryContext(context.Background(), `SELECT state, `+q.db.Dialect.JSONText("args", "order_id")+`,
		COALESCE(`+q.db.Dialect.JSONText("args", "takeover")+`, '0') FROM river_job WHERE kind = 'fulfil' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var state, order, key string
		if err := rows.Scan(&state, &order, &key); err != nil {
			t.Fatal(err)
		}
		out = append(out, state+" "+order+" "+key)
	}
	return out
}

// The operator's retry while the order's job row is still running (a run stuck, or its
// outcome not yet recorded) queues a new job: River's JobRetry did nothing to a running
// row, yet the retry reported success and the order was left with no runnable job.
func TestRetryWhileTheJobRunsQueuesANewJob(t *testing.T) {
	q := newQueue(t, Handlers{})
	ctx := context.Background()
	if err := q.Fulfil(ctx, "order-1"); err != nil {
		t.Fatal(err)
	}
	exec(t, q.db, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = CURRENT_TIMESTAMP`)
	if _, err := q.RetryFulfilment(ctx, "order-1"); err != nil {
		t.Fatal(err)
	}
	want := []string{"running order-1 0", "available order-1 1"}
	if got := fulfilRows(t, q); !slices.Equal(got, want) {
		t.Fatalf("after the retry: %q, want %q", got, want)
	}
}

// An order whose job rows were lost is queued again under a key none of its jobs had,
// however many were lost.
func TestRequeueTakesTheNextKey(t *testing.T) {
	q := newQueue(t, Handlers{})
	ctx := context.Background()
	for range 2 {
		if _, err := q.Requeue(ctx, "order-1"); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, q.db, `UPDATE river_job SET state = 'completed', finalized_at = CURRENT_TIMESTAMP`)
	if _, err := q.Requeue(ctx, "order-1"); err != nil {
		t.Fatal(err)
	}
	want := []string{"completed order-1 0", "completed order-1 1", "available order-1 2"}
	if got := fulfilRows(t, q); !slices.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	exec(t, q.db, `DELETE FROM river_job`)
	if _, err := q.Requeue(ctx, "order-1"); err != nil {
		t.Fatal(err)
	}
	if got := fulfilRows(t, q); !slices.Equal(got, []string{"available order-1 0"}) {
		t.Fatalf("with no row left: %q", got)
	}
}

// A shutdown that stops an order's last attempt gives nothing up: the job goes back to the
// queue with its attempt unused, to run again after the restart. (Before, the worker read
// the cancelled run as its last failure and gave a healthy order up, refunding it.)
func TestAShutdownOnTheLastAttemptGivesNothingUp(t *testing.T) {
	var giveUps atomic.Int32
	running := make(chan struct{}, 1)
	q := newQueue(t, Handlers{
		Fulfil: func(ctx context.Context, _ string, _ func() error) error {
			running <- struct{}{}
			<-ctx.Done()
			return errors.New("the engine was killed")
		},
		GiveUp: func(context.Context, string, error) error { giveUps.Add(1); return nil },
	})
	ctx := context.Background()
	if err := q.Fulfil(ctx, "order-1"); err != nil {
		t.Fatal(err)
	}
	exec(t, q.db, `UPDATE river_job SET max_attempts = 1`)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("the job never ran")
	}
	stopCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	q.Stop(stopCtx)
	var state string
	var attempt int
	if err := q.db.QueryRowContext(ctx, `SELECT state, attempt FROM river_job WHERE kind = 'fulfil'`).Scan(&state, &attempt); err != nil {
		t.Fatal(err)
	}
	if giveUps.Load() != 0 || (state != "available" && state != "scheduled") || attempt != 0 {
		t.Fatalf("after the shutdown: %d give-ups, job %s at attempt %d; want none, queued at 0", giveUps.Load(), state, attempt)
	}
}

// A process's identity is its node id and its boot, the same for its life; on SQLite it
// is the one live holder, on Postgres every node that beats within NodeDeadAfter is.
func TestHolderAndLiveHolders(t *testing.T) {
	db := testkit.OpenDB(t)
	ctx := context.Background()
	a := newNode(t, db, "node-a", Handlers{})
	if h := a.Holder(); h != a.Holder() || !strings.HasPrefix(h, "node-a:") || len(h) <= len("node-a:") {
		t.Fatalf("holder %q", h)
	}
	if db.Dialect != sqldb.Postgres {
		if live, err := a.LiveHolders(ctx); err != nil || !slices.Equal(live, []string{a.Holder()}) {
			t.Fatalf("live holders %q, %v; want this process alone", live, err)
		}
		return
	}
	b := newNode(t, db, "node-b", Handlers{})
	start(t, a)
	start(t, b)
	exec(t, db, `INSERT INTO nodes (id, started_at, seen_at, boot) VALUES ('node-c', 0, `+dbMillis+` - ?, 'old')`,
		(2 * fastDeath).Milliseconds())
	// Before its own beats are regular (a database outage makes every beat stale), a node
	// judges no one dead: node-c is listed live.
	if live, err := a.LiveHolders(ctx); err != nil || !slices.Contains(live, "node-c:old") || !slices.Contains(live, a.Holder()) {
		t.Fatalf("live holders before node-a's beats are regular: %q, %v; want node-c and node-a among them", live, err)
	}
	testkit.Eventually(t, 10*time.Second, a.nodes.judging.Load, "node-a's beats regular")
	live, err := a.LiveHolders(ctx)
	slices.Sort(live)
	if want := []string{a.Holder(), b.Holder()}; err != nil || !slices.Equal(live, want) {
		t.Fatalf("live holders %q, %v; want %q (node-c is dead)", live, err, want)
	}
}

// A process whose node id another process took (the twin that started while it was
// frozen, or a NODE_ID given twice) stops working: its lease ends for good and its client
// stops, so no job queued after works on it, a refund no more than a fulfilment (the
// lease alone gates only fulfilments). Before, it logged and worked on.
func TestADisplacedTwinStops(t *testing.T) {
	db := postgresOnly(t)
	ctx := context.Background()
	var calls atomic.Int32
	q := newNode(t, db, "node-a", Handlers{
		Fulfil: func(context.Context, string, func() error) error { calls.Add(1); return nil },
		Refund: func(context.Context, string, bool) error { calls.Add(1); return nil },
	})
	start(t, q)
	exec(t, db, `UPDATE nodes SET boot = 'the-twin' WHERE id = 'node-a'`)
	testkit.Eventually(t, 10*time.Second, func() bool { return q.lease.check() != nil }, "the lease lapsed")
	if err := errors.Join(q.Fulfil(ctx, "order-1"), q.Refund(ctx, "order-2")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // 50 polls
	var boot string
	db.QueryRowContext(ctx, `SELECT boot FROM nodes WHERE id = 'node-a'`).Scan(&boot)
	if calls.Load() != 0 || boot != "the-twin" {
		t.Fatalf("the displaced node ran %d jobs; the id's row has boot %q, want the twin's", calls.Load(), boot)
	}
}

// The queue runs the reconciler every ReconcileInterval, on whichever node leads: its
// handler is called at the start and again an interval later.
func TestTheQueueRunsTheReconcilerEveryInterval(t *testing.T) {
	var passes atomic.Int32
	q := newNodeWith(t, testkit.OpenDB(t), "test-node", Handlers{Reconcile: func(context.Context) error { passes.Add(1); return nil }},
		func(c *Config) { c.ReconcileInterval = 300 * time.Millisecond })
	start(t, q)
	testkit.Eventually(t, 30*time.Second, func() bool { return passes.Load() >= 2 }, "two passes of the reconciler")
}
