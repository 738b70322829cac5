package orders

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers/testkit"
)

// The holes of issue 37 in the run itself (the queue's are in jobs/takeover_test.go).

// An order whose runs ended without a result as often as the attempt limit allows (its
// node died each time: nothing but the claim counts such a run) is given up at its next
// run and refunded, not produced again and again.
func TestAnOrderThatKillsItsNodesIsGivenUp(t *testing.T) {
	f := newFixture(t, nil) // MaxAttempts 3
	ctx := context.Background()
	co := f.paidStopped(t, "A poison order.")
	for range 3 { // three runs, each ended by its node's death after its claim
		if _, _, err := f.book.fulfil.fence.claim(ctx, co.OrderID); err != nil {
			t.Fatal(err)
		}
	}
	f.restart(t)
	o := f.waitStatus(t, co.OrderID, Refunded)
	refunds, _ := f.test.Refunds(ctx)
	if o.Error != "production_failed" || f.speaker.calls.Load() != 0 || len(refunds) != 1 {
		t.Errorf("order %s (%q), %d engine calls, %d refunds; want refunded production_failed, no call, one refund",
			o.Status, o.Error, f.speaker.calls.Load(), len(refunds))
	}
	if !strings.Contains(f.logs.String(), "runs ended without a result too often") {
		t.Error("the operator is not told which order took its nodes down")
	}
}

// A run stopped by a shutdown gives its run back: a graceful restart does not count
// against the order.
func TestAShutdownDoesNotCountARun(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.speaker.working.Store(true)
	co := f.order(t, "Stopped by a shutdown.")
	f.pay(t, co.SessionID)
	f.waitStatus(t, co.OrderID, Processing)
	stopCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	f.book.Stop(stopCtx) //nolint:errcheck // the running job is cancelled
	var runs int64
	f.book.Desk.orders.db.QueryRowContext(ctx, `SELECT runs FROM orders WHERE id = ?`, co.OrderID).Scan(&runs)
	if runs != 0 {
		t.Errorf("after a shutdown the order counts %d runs, want 0", runs)
	}
}

// A claim never replaces a stored result: a run that claimed the order after another
// stored its result cannot store a second one (the link in the letter would serve other
// bytes, an edit saved under the first would be lost).
func TestAClaimNeverReplacesAStoredResult(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.paidStopped(t, "Stored once.")
	fence := f.book.fulfil.fence
	first, _, _ := fence.claim(ctx, co.OrderID)
	second, _, _ := fence.claim(ctx, co.OrderID)
	expires := f.clock.Now().Add(time.Hour)
	if ok, err := fence.setResultFenced(ctx, co.OrderID, second, claimPrefix(co.OrderID, second)+"a.mp3", "a.mp3", "tok", expires); !ok || err != nil {
		t.Fatalf("the holder's result: %v, %v", ok, err)
	}
	third, _, _ := fence.claim(ctx, co.OrderID)
	if ok, _ := fence.setResultFenced(ctx, co.OrderID, third, claimPrefix(co.OrderID, third)+"b.mp3", "b.mp3", "tok2", expires); ok {
		t.Error("a later claim replaced the stored result")
	}
	if ok, _ := fence.setResultFenced(ctx, co.OrderID, first, "x", "x", "tok3", expires); ok {
		t.Error("a lost claim stored a result")
	}
	o, _ := f.book.orders.Get(ctx, co.OrderID)
	if o.ResultKey != claimPrefix(co.OrderID, second)+"a.mp3" {
		t.Errorf("the order serves %q", o.ResultKey)
	}
}

// A run whose order was taken over stops at its next engine process (the gate checks the
// run's claim, not only the node's lease) ...
func TestTheGateStopsARunThatLostItsOrder(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.speaker.working.Store(true)
	f.speaker.gated.Store(true)
	co := f.order(t, "Taken over while spoken.")
	f.pay(t, co.SessionID)
	f.waitStatus(t, co.OrderID, Processing)
	if _, _, err := f.book.fulfil.fence.claim(ctx, co.OrderID); err != nil { // another runner's
		t.Fatal(err)
	}
	if !testkit.WaitFor(10*time.Second, func() bool { return f.speaker.stopped.Load() != nil }) {
		t.Fatal("the engine went on after its run lost the order")
	}
	if err := *f.speaker.stopped.Load(); !errors.Is(err, ErrClaimLost) {
		t.Errorf("the engine stopped with %v, want the gate's ErrClaimLost", err)
	}
}

// ... and a run whose progress write is refused stops (its context ends), even before an
// engine process.
func TestARefusedProgressWriteStopsTheRun(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.speaker.working.Store(true)
	f.speaker.progress.Store(true)
	co := f.order(t, "Its progress refused.")
	f.pay(t, co.SessionID)
	f.waitStatus(t, co.OrderID, Processing)
	// Another runner takes the order; this engine starts no process the gate could stop:
	// only the progress write tells the run.
	if _, _, err := f.book.fulfil.fence.claim(ctx, co.OrderID); err != nil {
		t.Fatal(err)
	}
	if !testkit.WaitFor(10*time.Second, func() bool { return f.speaker.stopped.Load() != nil }) {
		t.Fatal("the run went on after its progress was refused")
	}
	if err := *f.speaker.stopped.Load(); !errors.Is(err, context.Canceled) {
		t.Errorf("the engine stopped with %v, want its context cancelled", err)
	}
}

// pausedAt makes a fixture whose runs stop at step until resume is closed (closed when
// the test ends, before the fixture stops); stopped receives the order id.
func pausedAt(t *testing.T, step string) (f *fixture, stopped chan string, resume func()) {
	t.Helper()
	stopped = make(chan string, 1)
	ch := make(chan struct{})
	var once sync.Once
	resume = func() { once.Do(func() { close(ch) }) }
	f = newFixture(t, func(c *Config) {
		c.Checkpoint = func(id, s string) {
			if s == step {
				stopped <- id
				<-ch
			}
		}
	})
	t.Cleanup(resume)
	return f, stopped, resume
}

// The operator refunds an order whose run has just sent its link (the letter left; the
// run has not recorded it): the order ends refunded, once, and the link in that letter
// serves nothing. (The refund took no claim and Download looked at no status: refunded
// and delivered.)
func TestAnOperatorsRefundStopsARunningDelivery(t *testing.T) {
	f, stopped, resume := pausedAt(t, "sent")
	ctx := context.Background()
	co := f.order(t, "Refunded as it is mailed.")
	f.pay(t, co.SessionID)
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the letter was never sent")
	}
	if _, err := f.book.Operator().Refund(ctx, Actor{Who: "token", IP: "127.0.0.1", Once: "r1"}, co.OrderID); err != nil {
		t.Fatal(err)
	}
	resume()
	if !testkit.WaitFor(10*time.Second, func() bool { s := f.jobState(t); return s != "running" && s != "available" }) {
		t.Fatalf("the job is still %s", f.jobState(t))
	}
	o, _ := f.book.orders.Get(ctx, co.OrderID)
	refunds, _ := f.test.Refunds(ctx)
	if o.Status != Refunded || len(refunds) != 1 {
		t.Errorf("order %s, %d refunds; want refunded once", o.Status, len(refunds))
	}
	if o.LinkToken == "" {
		t.Fatal("the order has no link token to try")
	}
	if _, err := f.book.Download(ctx, o.LinkToken); !errors.Is(err, ErrLinkExpired) {
		t.Errorf("the refunded order's link serves: %v", err)
	}
}

// A delivered order the operator refunds keeps its file until its link lapses: the
// orphan sweep does not take it.
func TestARefundedDeliveryKeepsItsFile(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	o := f.delivered(t, "Delivered, then refunded.")
	if _, err := f.book.Operator().Refund(ctx, Actor{Who: "token", IP: "127.0.0.1", Once: "r1"}, o.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.book.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.book.Download(ctx, o.LinkToken); err != nil {
		t.Fatalf("the refunded delivery's link: %v", err)
	}
	obj, err := f.files.Get(ctx, o.ResultKey)
	if err != nil {
		t.Fatalf("its file after the sweep: %v", err)
	}
	obj.Body.Close()
}

// A refund job frozen after its claim, while the operator retries the order, refunds
// nothing when it resumes: the retry took the order back (a new claim).
func TestARetryFencesOffAFrozenRefund(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxAttempts = 1 })
	ctx := context.Background()
	f.speaker.failures.Store(-1)
	co := f.paidStopped(t, "Failed, then retried.")
	// Failed for good (as its run gives it up), its refund job not run yet.
	claim, _, _ := f.book.fulfil.fence.claim(ctx, co.OrderID)
	if ok, err := f.book.fulfil.fence.failFenced(ctx, co.OrderID, claim, "production_failed"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	refundClaim, err := f.book.fulfil.fence.claimRefund(ctx, co.OrderID) // the refund starts, then freezes
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.book.Operator().Retry(ctx, Actor{Who: "token", IP: "127.0.0.1", Once: "r1"}, co.OrderID); err != nil {
		t.Fatal(err)
	}
	if err := f.book.fulfil.refundClaimed(ctx, co.OrderID, refundClaim, true); err != nil { // it resumes
		t.Fatal(err)
	}
	refunds, _ := f.test.Refunds(ctx)
	o, _ := f.book.orders.Get(ctx, co.OrderID)
	if len(refunds) != 0 || o.Status != Paid {
		t.Errorf("%d refunds, order %s; want none and the order paid again", len(refunds), o.Status)
	}
}

// Once a failed order's refund went to the payment provider, the operator's Retry is
// refused: the refund's letter failing (its job to be retried) left the order failed, and a
// retry then delivered what had been refunded.
func TestARetryIsRefusedOnceTheRefundWentOut(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxAttempts = 1 })
	ctx := context.Background()
	co := f.paidStopped(t, "Refunded, its letter not sent yet.")
	claim, _, _ := f.book.fulfil.fence.claim(ctx, co.OrderID)
	if ok, err := f.book.fulfil.fence.failFenced(ctx, co.OrderID, claim, "production_failed"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	// The outbox cannot be written: the refund's letter certainly fails, and not on the
	// last attempt its job is retried later.
	if err := os.RemoveAll(f.outbox); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.outbox, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.book.fulfil.refund(ctx, co.OrderID, false); err == nil {
		t.Fatal("the refund's letter could not be written, yet the refund job ended well")
	}
	if refunds, _ := f.test.Refunds(ctx); len(refunds) != 1 {
		t.Fatalf("%d refunds at the provider, want 1", len(refunds))
	}
	if _, err := f.book.Operator().Retry(ctx, Actor{Who: "token", IP: "127.0.0.1", Once: "r1"}, co.OrderID); err == nil {
		t.Error("the operator retried an order whose money went back")
	}
	if o, _ := f.book.orders.Get(ctx, co.OrderID); o.Status != Failed {
		t.Errorf("order %s after the refused retry, want failed (its refund job finishes it)", o.Status)
	}
}

// A run whose node's lease lapsed (the gate closed while it still holds the order) is
// retried, not refunded, however the engine read the refusal: an ffmpeg that could not
// start reads as a source that changed, a permanent failure.
func TestAClosedGateIsNeverAPermanentFailure(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.speaker.working.Store(true)
	f.speaker.gated.Store(true)
	f.speaker.misreads.Store(true)
	co := f.paidStopped(t, "Its node's lease lapsed.")
	lapsed := func() error { return errors.New("this node's heartbeat lease has lapsed") }
	err := f.book.fulfil.fulfil(ctx, co.OrderID, lapsed)
	var pe *permanentError
	if err == nil || errors.As(err, &pe) || errors.Is(err, ErrClaimLost) {
		t.Fatalf("the run ended with %v; want the gate's error, retried", err)
	}
}

// A node frozen while the database answered its gate's claim check (the answer waiting in
// its socket) starts nothing once it resumes: its lease, lapsed meanwhile, is the gate's
// last word (found by the fault suite, seed 19: an ffmpeg forked 10 ms after the resume).
func TestTheLeaseIsTheGatesLastWord(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.paidStopped(t, "Its node froze mid-gate.")
	claim, _, err := f.book.fulfil.fence.claim(ctx, co.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.book.fulfil.gate(ctx, co.OrderID, claim, func() error { return nil })(); err != nil {
		t.Fatalf("the gate of a run holding its order and its lease refused: %v", err)
	}
	asked := 0
	lapsesWhileTheDatabaseAnswers := func() error {
		if asked++; asked > 1 {
			return errors.New("this node's heartbeat lease has lapsed")
		}
		return nil
	}
	if err := f.book.fulfil.gate(ctx, co.OrderID, claim, lapsesWhileTheDatabaseAnswers)(); err == nil {
		t.Error("the gate let a process start although the lease lapsed after it was first asked")
	}
}

// A run that lost its order while its letter's send was under way gives the letter's
// claim back to no one: the winner found it claimed and finished without it, and a claim
// given back then would say the letter was never tried (found by the fault suite, seed 21:
// done, mail_claimed_at 0, no letter, nothing left to send it).
func TestALoserGivesNoLetterClaimBack(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.paidStopped(t, "Its letter claimed by a loser.")
	fence := f.book.fulfil.fence
	loser, _, _ := fence.claim(ctx, co.OrderID)
	if ok, err := fence.claimLetter(ctx, co.OrderID, loser, Processing, f.clock.Now()); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, _, err := fence.claim(ctx, co.OrderID); err != nil { // the winner's
		t.Fatal(err)
	}
	if ok, err := fence.unclaimLetter(ctx, co.OrderID, loser, f.clock.Now()); ok || err != nil {
		t.Fatal(ok, err)
	}
	var claimed int64
	f.book.Desk.orders.db.QueryRowContext(ctx, `SELECT mail_claimed_at FROM orders WHERE id = ?`, co.OrderID).Scan(&claimed)
	if claimed == 0 {
		t.Error("a run that lost the order gave its letter's claim back")
	}
}

// A failed order always gets its refund job: one whose insert failed after the order was
// marked is queued by the next run of its fulfilment, and a refund job that ended (done,
// or finding the order retried by the operator) does not keep a later give-up of the same
// order from queueing its own.
func TestAFailedOrderAlwaysGetsItsRefundJob(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxAttempts = 1 })
	ctx := context.Background()
	co := f.paidStopped(t, "Failed; its refund job lost.")
	claim, _, _ := f.book.fulfil.fence.claim(ctx, co.OrderID)
	if ok, err := f.book.fulfil.fence.failFenced(ctx, co.OrderID, claim, "production_failed"); !ok || err != nil {
		t.Fatal(ok, err) // marked failed; the refund job's insert "failed"
	}
	db := f.book.Desk.orders.db
	refundJobs := func() (n int) {
		db.QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE kind = 'refund'`).Scan(&n)
		return n
	}
	if err := f.book.fulfil.fulfil(ctx, co.OrderID, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := refundJobs(); n != 1 {
		t.Fatalf("%d refund jobs after the failed order's next run, want 1", n)
	}
	if err := f.book.fulfil.queue.Refund(ctx, co.OrderID); err != nil || refundJobs() != 1 {
		t.Fatalf("a second refund queued while the first is unfinished: %d jobs, %v", refundJobs(), err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE river_job SET state = 'completed', finalized_at = created_at WHERE kind = 'refund'`); err != nil {
		t.Fatal(err)
	}
	if err := f.book.fulfil.queue.Refund(ctx, co.OrderID); err != nil || refundJobs() != 2 {
		t.Errorf("after the first refund job ended, a later give-up's refund: %d jobs, %v; want 2", refundJobs(), err)
	}
}
