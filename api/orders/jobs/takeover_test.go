package jobs

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers/sqldb"
	"parla/providers/testkit"
)

// postgresOnly skips a test of a cluster on SQLite, where one process owns the database.
func postgresOnly(t *testing.T) *sqldb.DB {
	t.Helper()
	db := testkit.OpenDB(t)
	if db.Dialect != sqldb.Postgres {
		t.Skip("several nodes share only a Postgres database (PARLA_TEST_DB=postgres)")
	}
	return db
}

// run is one call of a fulfilment handler: which node ran it, and how it ends.
type run struct {
	node string
	end  chan error
}

// runs hands out the fulfilment handlers of several nodes and records their calls.
type runs struct {
	mu    sync.Mutex
	calls []*run
	seen  chan *run
}

func newRuns() *runs { return &runs{seen: make(chan *run, 16)} }

func (r *runs) handler(node string) Handlers {
	return Handlers{Fulfil: func(ctx context.Context, _ string, _ func() error) error {
		c := &run{node: node, end: make(chan error)}
		r.mu.Lock()
		r.calls = append(r.calls, c)
		r.mu.Unlock()
		r.seen <- c
		select {
		case err := <-c.end:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
}

func (r *runs) next(t *testing.T, within time.Duration) *run {
	t.Helper()
	select {
	case c := <-r.seen:
		return c
	case <-time.After(within):
		t.Fatalf("no run of the job within %s", within)
		return nil
	}
}

// A node judged dead that resumes and ends its run as a loser does (ErrCancel) leaves the
// job of the node that took the order over alone: the winner's retry still happens. (On
// the same job row, River's completer put the loser's cancel on the winner's attempt and
// dropped the winner's retry: the order stayed processing for ever.)
func TestLosersOutcomeLeavesTheWinnersJobAlone(t *testing.T) {
	db := postgresOnly(t)
	r := newRuns()
	loser := newNode(t, db, "loser", r.handler("loser"))
	winner := newNode(t, db, "winner", r.handler("winner"))
	ctx := context.Background()
	start(t, loser)
	if err := loser.Fulfil(ctx, "order-1"); err != nil {
		t.Fatal(err)
	}
	first := r.next(t, 10*time.Second)
	if first.node != "loser" {
		t.Fatalf("first run on %s", first.node)
	}
	// The loser freezes: its heartbeat stops (and its row goes), its run hangs on.
	loser.stopBeat()
	loser.stopBeat = nil
	start(t, winner)
	second := r.next(t, 10*(fastDeath+JudgeAfterBeats*fastBeat))
	if second.node != "winner" {
		t.Fatalf("the takeover ran on %s", second.node)
	}
	// The loser resumes and ends as one (the order is no longer its run's).
	first.end <- errors.Join(errors.New("claim lost"), ErrCancel)
	time.Sleep(500 * time.Millisecond) // River's completer records it
	// The winner meets a passing failure: its job must be retried.
	second.end <- errors.New("SMTP 451, try later")
	third := r.next(t, 20*time.Second)
	third.end <- nil
	// Every row of the order ends completed: the loser's, the winner's, and any the
	// winner's takeovers made of the rows the resumed loser fetched and snoozed (its lease
	// lapsed), none left cancelled, retryable or running.
	var states []string
	if !testkit.WaitFor(10*time.Second, func() bool {
		states = jobStates(t, db)
		return len(states) >= 2 && strings.Count(strings.Join(states, ","), "completed") == len(states)
	}) {
		t.Errorf("the order's fulfilment rows are %v, want every one completed", states)
	}
	select {
	case c := <-r.seen:
		t.Errorf("a fourth run, on %s, after the order was done", c.node)
		c.end <- nil
	default:
	}
}

// jobStates are the fulfilment rows' states, oldest first.
func jobStates(t *testing.T, db *sqldb.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT state FROM river_job WHERE kind = 'fulfil' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

// A node restarted under the same id takes over the jobs of its previous life at once,
// not after the death timeout; a second live process under the same id is refused.
func TestSameIDRestartTakesOverAtOnceAndATwinIsRefused(t *testing.T) {
	db := postgresOnly(t)
	r := newRuns()
	ctx := context.Background()
	// node-a's previous life was killed while it ran the order: its job is running under
	// its id, its heartbeat row fresh.
	if err := newNode(t, db, "node-a", r.handler("nobody")).Fulfil(ctx, "order-1"); err != nil {
		t.Fatal(err)
	}
	exec(t, db, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(), attempted_by = ARRAY['node-a']`)
	exec(t, db, `INSERT INTO nodes (id, started_at, seen_at, boot) VALUES ('node-a', `+dbMillis+`, `+dbMillis+`, 'old')`)

	// While something still beats under the id, a process that takes it is refused.
	beating, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for beating.Err() == nil {
			db.ExecContext(beating, `UPDATE nodes SET seen_at = `+dbMillis+` WHERE id = 'node-a'`)
			time.Sleep(fastBeat)
		}
	}()
	twin := newNode(t, db, "node-a", r.handler("twin"))
	err := twin.Start(ctx)
	stop()
	<-done
	if !errors.Is(err, errIDTaken) {
		twin.Stop(ctx)
		t.Fatalf("a second live process under the same id started: %v", err)
	}

	// Nothing beats under it any more: the restarted node takes the order at once.
	restarted := newNode(t, db, "node-a", r.handler("restarted"))
	started := time.Now()
	start(t, restarted)
	c := r.next(t, 10*time.Second)
	c.end <- nil
	if c.node != "restarted" {
		t.Fatalf("the order ran on %s", c.node)
	}
	if took := time.Since(started); took >= fastDeath+JudgeAfterBeats*fastBeat {
		t.Errorf("the restarted node took its old job over after %s, no sooner than a dead node's", took)
	}
}

func exec(t *testing.T, db *sqldb.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}
