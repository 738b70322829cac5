package orders

import (
	"context"
	"testing"
	"time"
)

// A paid order whose job was never queued (its node died between recording the payment
// and the insert), whose job row was lost, or whose job ended before any run claimed it
// is queued again by the reconciler once its payment is older than ReconcileInterval,
// under a new key, and delivered: before, it stayed paid for ever (or, its job cancelled,
// was refunded). The app's own steps run after the book's and are counted too.
func TestAPaidOrderWithNoJobIsQueuedAgainAndDelivered(t *testing.T) {
	rec := &recorder{}
	f := newFixtureDeps(t, func(c *Config) {
		c.Reconcilers = []Reconciler{{"app", func(context.Context) (int, error) { return 2, nil }}}
	}, func(d *Deps) { d.Observer = rec })
	ctx := context.Background()
	co := f.paidStopped(t, "Its job was lost.")
	f.exec(t, `DELETE FROM river_job WHERE kind = 'fulfil'`)
	cancelled := f.order(t, "Its job ended before any run claimed it.")
	f.pay(t, cancelled.SessionID)
	f.exec(t, `UPDATE river_job SET state = 'cancelled', finalized_at = CURRENT_TIMESTAMP WHERE kind = 'fulfil'`)
	if rep, err := f.book.Reconcile(ctx); err != nil || rep["unqueued"] != 0 {
		t.Fatalf("reconciler within the grace: %v, %v; want the payment's insert left its time", rep, err)
	}
	f.clock.Advance(f.book.cfg.ReconcileInterval + time.Second)
	rep, err := f.book.Reconcile(ctx)
	if err != nil || rep["unqueued"] != 2 || rep["lost"] != 0 || rep["app"] != 2 {
		t.Fatalf("reconciler: %v, %v; want both orders queued again, none refunded, and the app's step run", rep, err)
	}
	if rep, _ := f.book.Reconcile(ctx); rep["unqueued"] != 0 {
		t.Errorf("a second pass queued %d more", rep["unqueued"])
	}
	counted := map[string]int{}
	for _, e := range rec.of(EventReconciled) {
		counted[e.Reason]++
	}
	if counted["unqueued"] != 2 || counted["app"] < 6 { // 3 passes here, and the queue's own
		t.Errorf("counted %v; want unqueued twice, the app's step twice a pass", counted)
	}
	f.restart(t)
	f.waitStatus(t, co.OrderID, Done)
	if o := f.waitStatus(t, cancelled.OrderID, Done); o.LinkToken == "" || len(f.mails(t)) != 2 {
		t.Errorf("after the pass: %+v, %d letters", o, len(f.mails(t)))
	}
}

// A failed order with no refund job (its insert failed, or the job used up its attempts
// while the payment provider was down) is refunded after one pass; one whose refund went
// to the provider with its fate unknown is not sent again but listed for the operator
// (the admin area's stuck orders).
func TestAFailedOrderWithNoRefundJobIsRefunded(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	lost := f.paidStopped(t, "Its refund job was lost.")
	unknown := f.order(t, "Its refund went out, fate unknown.")
	f.pay(t, unknown.SessionID)
	f.exec(t, `DELETE FROM river_job WHERE kind = 'fulfil'`)
	f.exec(t, `UPDATE orders SET status = 'failed', error = 'production_failed' WHERE id IN (?, ?)`, lost.OrderID, unknown.OrderID)
	f.exec(t, `UPDATE orders SET refund_sent_at = ? WHERE id = ?`, millis(f.clock.Now()), unknown.OrderID)
	rep, err := f.book.Reconcile(ctx)
	if err != nil || rep["unrefunded"] != 1 {
		t.Fatalf("reconciler: %v, %v; want one refund queued", rep, err)
	}
	f.restart(t)
	f.waitStatus(t, lost.OrderID, Refunded)
	if refunds, _ := f.test.Refunds(ctx); len(refunds) != 1 {
		t.Errorf("%d refunds, want 1", len(refunds))
	}
	f.clock.Advance(f.book.cfg.JobTimeout + time.Second)
	stuck, err := f.book.Operator().Search(ctx, Search{Filter: FilterStuck})
	if err != nil || len(stuck) != 1 || stuck[0].ID != unknown.OrderID {
		t.Errorf("stuck %v, %v; want the order whose refund's fate is unknown", stuck, err)
	}
	if o, _ := f.book.orders.Get(ctx, unknown.OrderID); o.Status != Failed {
		t.Errorf("the order whose refund's fate is unknown is %s", o.Status)
	}
}

// A processing order whose job row was lost (its node died in the run, and no takeover
// finds a row) is queued again at the next pass, with no grace: the new run's claim fences
// off any run still going. It is delivered once.
func TestAProcessingOrderWhoseJobRowWasLostIsRunAgain(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.paidStopped(t, "Its node died in the run, and its job row was lost.")
	if _, _, err := f.book.fulfil.fence.claim(ctx, co.OrderID); err != nil {
		t.Fatal(err)
	}
	f.exec(t, `DELETE FROM river_job WHERE kind = 'fulfil'`)
	if rep, err := f.book.Reconcile(ctx); err != nil || rep["unqueued"] != 1 {
		t.Fatalf("reconciler: %v, %v; want the order queued again", rep, err)
	}
	f.restart(t)
	if o := f.waitStatus(t, co.OrderID, Done); o.LinkToken == "" || len(f.mails(t)) != 1 {
		t.Errorf("after the pass: %+v, %d letters", o, len(f.mails(t)))
	}
}
