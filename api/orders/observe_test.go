package orders

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/api/orders/jobs"
	"parla/providers/sqldb"
	"parla/providers/testkit"
)

// recorder is an Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Observe(e Event) { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }

func (r *recorder) kinds() []EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []EventKind
	for _, e := range r.events {
		out = append(out, e.Kind)
	}
	return out
}

func (r *recorder) of(kind EventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func TestObserverHearsADeliveredOrder(t *testing.T) {
	rec := &recorder{}
	f := newFixtureDeps(t, nil, func(d *Deps) { d.Observer = rec })
	co := f.order(t, "Hola, esto es una prueba.")
	f.pay(t, co.SessionID)
	f.waitStatus(t, co.OrderID, Done)
	want := []EventKind{EventCreated, EventPaid, EventProduced, EventMailed, EventDelivered}
	// "delivered" is told just after the done row is written: wait for the fifth event.
	testkit.WaitFor(10*time.Second, func() bool { return len(rec.kinds()) >= len(want) })
	if got := rec.kinds(); !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	paid := rec.of(EventPaid)[0]
	if paid.Service != TTS || paid.Amount != co.Amount || paid.Currency == "" {
		t.Errorf("paid event = %+v, want %d for tts", paid, co.Amount)
	}
	produced := rec.of(EventProduced)[0]
	if produced.Reason != "" || produced.Took <= 0 {
		t.Errorf("produced event = %+v", produced)
	}
	if m := rec.of(EventMailed)[0]; m.Reason != "delivered" || m.Err != nil {
		t.Errorf("mailed event = %+v", m)
	}
}

func TestObserverHearsAFailureAndItsRefund(t *testing.T) {
	rec := &recorder{}
	f := newFixtureDeps(t, nil, func(d *Deps) { d.Observer = rec })
	f.speaker.failures.Store(-1)
	co := f.order(t, "This will never be spoken.")
	f.pay(t, co.SessionID)
	f.waitStatus(t, co.OrderID, Refunded)
	produced := rec.of(EventProduced)
	if len(produced) != 3 || produced[0].Reason != "failed" {
		t.Errorf("produced events = %+v, want 3 failed attempts", produced)
	}
	failed, refunded := rec.of(EventFailed), rec.of(EventRefunded)
	if len(failed) != 1 || failed[0].Reason != "production_failed" {
		t.Errorf("failed events = %+v", failed)
	}
	if len(refunded) != 1 || refunded[0].Reason != "production_failed" || refunded[0].Amount != co.Amount {
		t.Errorf("refunded events = %+v", refunded)
	}
	if m := rec.of(EventMailed); len(m) != 1 || m[0].Reason != "refunded" {
		t.Errorf("mailed events = %+v", m)
	}
	if d := rec.of(EventDelivered); len(d) != 0 {
		t.Errorf("a refunded order was delivered: %+v", d)
	}
}

// Gauges count what waits: a paid order nobody works on, a job in a queue no worker
// serves; a delivered order is no longer counted.
func TestGauges(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.delivered(t, "Delivered and gone from the gauges.")
	// River records the finished job a moment after the order is done.
	// Past the wait, the check below shows the gauges.
	var g Gauges
	var err error
	testkit.WaitFor(5*time.Second, func() bool {
		if g, err = f.book.Gauges(ctx); err != nil {
			t.Fatal(err)
		}
		return g.Jobs["running"] == 0
	})
	if len(g.Orders) != 0 || g.Jobs["available"] != 0 || !g.OldestAvailable.IsZero() || !g.OldestRunning.IsZero() {
		t.Fatalf("gauges after delivery = %+v", g)
	}

	waiting := f.order(t, "Paid, never queued.")
	paidAt := f.clock.Now().Add(-time.Minute)
	if _, err := f.book.orders.MarkPaid(ctx, waiting.OrderID, "pi_x", paidAt); err != nil {
		t.Fatal(err)
	}
	if g, err = f.book.Gauges(ctx); err != nil {
		t.Fatal(err)
	}
	if len(g.Orders) != 1 || g.Orders[0] != (OrderGauge{Service: TTS, Status: Paid, Count: 1, OldestPaid: fromMillis(millis(paidAt))}) {
		t.Errorf("orders = %+v", g.Orders)
	}
}

// The gauges read indexes, never the whole orders or jobs table. SQLite's plan says SCAN
// for a full table read and SEARCH … USING INDEX for an index; Postgres, with sequential
// scans discouraged (its planner rightly prefers them on a test's tiny tables), must still
// find an index for each.
func TestGaugeQueriesUseIndexes(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{openOrdersSQL, []any{Paid, Processing}},
		{jobs.StatesSQL, []any{"available", "scheduled", "retryable", "running"}},
		{jobs.OldestAvailableSQL, []any{"available"}},
		{jobs.OldestRunningSQL, []any{"running"}},
	} {
		tx, err := f.deps.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		explain := "EXPLAIN QUERY PLAN "
		if f.deps.DB.Dialect == sqldb.Postgres {
			explain = "EXPLAIN "
			if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := tx.QueryContext(ctx, explain+q.sql, q.args...)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var plan []string
		for rows.Next() {
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(any)
			}
			if err := rows.Scan(vals...); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, fmt.Sprint(*vals[len(vals)-1].(*any)))
		}
		rows.Close()
		tx.Rollback()
		joined := strings.Join(plan, "; ")
		t.Logf("%s", joined)
		if !strings.Contains(joined, "INDEX") && !strings.Contains(joined, "Index") ||
			strings.Contains(joined, "SCAN orders") || strings.Contains(joined, "SCAN river_job") || strings.Contains(joined, "Seq Scan") {
			t.Errorf("%s\nplan: %s", q.sql, joined)
		}
	}
}
