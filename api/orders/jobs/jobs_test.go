package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"parla/providers/sqldb"
	"parla/providers/testkit"
)

// The queue's tests run on SQLite, and on Postgres with PARLA_TEST_DB=postgres.
func TestMain(m *testing.M) { os.Exit(testkit.RunWithDB(m)) }

// newQueue builds a queue on a fresh database with h's handlers (nil ones do nothing),
// not started.
func newQueue(t *testing.T, h Handlers) *Queue {
	t.Helper()
	return newNode(t, testkit.OpenDB(t), "test-node", h)
}

// fastBeats are a cluster's timings short enough for a test: dead after 1.2 s.
const fastBeat, fastDeath = 200 * time.Millisecond, 1200 * time.Millisecond

// newNode builds a queue for node id on db, not started.
func newNode(t *testing.T, db *sqldb.DB, id string, h Handlers) *Queue {
	t.Helper()
	return newNodeWith(t, db, id, h, nil)
}

// newNodeWith is newNode with the test's configuration edited first.
func newNodeWith(t *testing.T, db *sqldb.DB, id string, h Handlers, edit func(*Config)) *Queue {
	t.Helper()
	nothing := func(context.Context) error { return nil }
	if h.Sweep == nil {
		h.Sweep = nothing
	}
	if h.Reconcile == nil {
		h.Reconcile = nothing
	}
	if h.GiveUp == nil {
		h.GiveUp = func(context.Context, string, error) error { return nil }
	}
	if h.Refund == nil {
		h.Refund = func(context.Context, string, bool) error { return nil }
	}
	cfg := Config{NodeID: id, Workers: 1, MaxAttempts: 3, RetryBase: 10 * time.Millisecond,
		PollInterval: 20 * time.Millisecond, JobTimeout: time.Minute, RescueAfter: 2 * time.Minute, SweepInterval: time.Hour, ReconcileInterval: time.Hour,
		HeartbeatEvery: fastBeat, NodeDeadAfter: fastDeath}
	if edit != nil {
		edit(&cfg)
	}
	q, err := New(context.Background(), cfg, db, h, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// start starts q until the test ends.
func start(t *testing.T, q *Queue) {
	t.Helper()
	ctx := context.Background()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Stop(ctx) })
}

// A node whose heartbeat lease has lapsed takes no new work; once it beats again it does,
// and the run's alive check holds.
func TestLapsedLeaseStartsNothing(t *testing.T) {
	var calls atomic.Int32
	var aliveErr atomic.Value
	q := newQueue(t, Handlers{Fulfil: func(_ context.Context, _ string, alive func() error) error {
		calls.Add(1)
		aliveErr.Store(errors.Join(alive()))
		return nil
	}})
	q.lease = &lease{valid: time.Minute} // as on Postgres; never renewed yet
	start(t, q)
	if err := q.Fulfil(context.Background(), "order-1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := calls.Load(); n != 0 {
		t.Fatalf("the fulfilment ran %d times without a lease", n)
	}
	q.lease.renew(time.Now())
	testkit.Eventually(t, 10*time.Second, func() bool { return calls.Load() == 1 }, "the fulfilment once the node beats")
	if err, _ := aliveErr.Load().(error); err != nil {
		t.Errorf("the run's alive check on a fresh lease: %v", err)
	}
}

// The lease's checks: a lapsed lease refuses, a fresh one passes, none (SQLite) passes,
// and a run that started before a freeze stays stopped when the node beats again.
func TestLeaseChecks(t *testing.T) {
	lapsed := &lease{valid: time.Second, last: time.Now().Add(-time.Hour)}
	if err := lapsed.check(); err != errLeaseLapsed {
		t.Errorf("a lapsed lease: %v", err)
	}
	fresh := &lease{valid: time.Minute}
	fresh.renew(time.Now())
	if err := fresh.check(); err != nil {
		t.Errorf("a fresh lease: %v", err)
	}
	if (*lease)(nil).check() != nil || (*lease)(nil).checkRun(0) != nil {
		t.Error("no lease (SQLite) refuses")
	}
	l := &lease{valid: time.Second}
	l.renew(time.Now().Add(-3 * time.Second))
	epoch := l.current()
	l.renew(time.Now())
	if l.check() != nil || l.checkRun(epoch) != errLeaseLapsed || l.checkRun(l.current()) != nil {
		t.Errorf("after a gap: check %v, the old run %v, a new run %v", l.check(), l.checkRun(epoch), l.checkRun(l.current()))
	}
}

func TestMayJudgeOnlyAfterBeatsWithoutAGap(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name string
		last time.Time
		want bool
	}{
		{"first beat after boot", time.Time{}, false},
		{"beat on time", now.Add(-heartbeatEvery), true},
		{"one beat late", now.Add(-2 * heartbeatEvery), true},
		{"after an outage of the database", now.Add(-nodeDeadAfter), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := mayJudge(c.last, now, heartbeatEvery); got != c.want {
				t.Errorf("mayJudge = %v, want %v", got, c.want)
			}
		})
	}
}

// A handler's error decides its job's fate here: ErrCancel cancels with no give-up, a
// Final error gives up at once, others retry until the last attempt, then give up.
func TestHandlerErrorsDecideTheJob(t *testing.T) {
	for _, c := range []struct {
		name        string
		err         error
		wantState   string
		wantGiveUps int32
		wantCalls   int32
	}{
		{"done", nil, "completed", 0, 1},
		{"cancelled", errors.Join(errors.New("lost"), ErrCancel), "cancelled", 0, 1},
		{"final", finalErr{}, "completed", 1, 1},
		{"retried, then given up", errors.New("engine down"), "completed", 1, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls, giveUps atomic.Int32
			q := newQueue(t, Handlers{
				Fulfil: func(context.Context, string, func() error) error { calls.Add(1); return c.err },
				GiveUp: func(context.Context, string, error) error { giveUps.Add(1); return nil },
			})
			start(t, q)
			ctx := context.Background()
			if err := q.Fulfil(ctx, "order-1"); err != nil {
				t.Fatal(err)
			}
			var state string
			testkit.Eventually(t, 20*time.Second, func() bool {
				q.db.QueryRowContext(ctx, `SELECT state FROM river_job WHERE kind = 'fulfil'`).Scan(&state)
				return state == c.wantState
			}, "the job "+c.wantState)
			if calls.Load() != c.wantCalls || giveUps.Load() != c.wantGiveUps {
				t.Errorf("%d runs, %d give-ups; want %d, %d", calls.Load(), giveUps.Load(), c.wantCalls, c.wantGiveUps)
			}
		})
	}
}

type finalErr struct{}

func (finalErr) Error() string { return "cannot succeed" }
func (finalErr) Final() bool   { return true }

// The queue's gauges and positions count the waiting fulfilments.
func TestGaugesAndPositionCountWaitingJobs(t *testing.T) {
	q := newQueue(t, Handlers{Fulfil: func(context.Context, string, func() error) error { return nil }})
	ctx := context.Background()
	before := time.Now()
	for _, id := range []string{"first", "second"} {
		if err := q.Fulfil(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	g, err := q.Gauges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g.States["available"] != 2 || !g.OldestRunning.IsZero() {
		t.Errorf("gauges = %+v, want two available, none running", g)
	}
	if age := time.Since(g.OldestAvailable); g.OldestAvailable.IsZero() || age < -time.Second || age > time.Since(before)+time.Second {
		t.Errorf("oldest available job at %v (age %v)", g.OldestAvailable, age)
	}
	for id, want := range map[string]int{"first": 1, "second": 2, "unknown": 0} {
		if got, err := q.Position(ctx, id); err != nil || got != want {
			t.Errorf("position of %s = %d, %v; want %d", id, got, err, want)
		}
	}
}
