package orders

import (
	"context"
	"strings"
	"testing"
	"time"
)

// failedStopped is a paid order given up by its run (failed), its refund job not run: the
// test plays the refund itself.
func (f *fixture) failedStopped(t *testing.T, text string) Checkout {
	t.Helper()
	ctx := context.Background()
	co := f.paidStopped(t, text)
	claim, _, err := f.book.fulfil.fence.claim(ctx, co.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.book.fulfil.fence.failFenced(ctx, co.OrderID, claim, "production_failed"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	return co
}

// Only the claim that marked a refund as sent may take the mark back: a newer claim's
// certain refusal says nothing of the refund the first one sent, whose answer may still be
// coming (the refund job and the operator's Refund racing: a 409). Before, refundRefused
// cleared the mark whoever set it, and the operator's Retry then delivered a refunded order.
func TestOnlyTheClaimThatMarkedARefundMayClearIt(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	fence := f.book.fulfil.fence
	id := f.failedStopped(t, "Refunded by two claims.").OrderID
	send := func(claim int64) {
		t.Helper()
		if ok, err := fence.refundSending(ctx, id, claim, f.clock.Now()); !ok || err != nil {
			t.Fatalf("claim %d: refundSending = %v, %v; want it sent", claim, ok, err)
		}
	}
	claimRefund := func() int64 {
		t.Helper()
		c, err := fence.claimRefund(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	a := claimRefund()
	send(a)
	if cleared, err := fence.refundRefused(ctx, id, a); !cleared || err != nil { // refused for certain: A's own mark
		t.Fatalf("the claim that marked the refund could not take its mark back: %v, %v", cleared, err)
	}
	send(a) // sent again; its answer unknown (a 409, a timeout)
	b := claimRefund()
	send(b) // the next attempt goes out under A's mark
	if cleared, err := fence.refundRefused(ctx, id, b); cleared || err != nil {
		t.Errorf("a newer claim's refusal took back the mark of an earlier claim's refund: %v, %v", cleared, err)
	}
	if cleared, err := fence.refundRefused(ctx, id, a); cleared || err != nil {
		t.Errorf("a claim that lost the order took back its mark: %v, %v", cleared, err)
	}
	if _, err := f.book.Operator().Retry(ctx, Actor{Who: "token", IP: "127.0.0.1", Once: "r1"}, id); err == nil {
		t.Error("the operator retried an order whose first refund may have gone through")
	}
}

// A failed order's refund never depends on its result still being kept: an order failed
// with its result stored (the operator refunded it while its letter went out) whose refund
// did not go through before its link lapsed is erased by the sweep, and its refund, by its
// job or by the operator, still returns the money and tells the visitor. Before, the erased
// mark refused the refund's mark: the payment was skipped, the job ended well, and the
// operator was told "refunded at the payment provider". Such an order is never retried
// (by "retry": the operator's Retry is refused, then the job refunds it): a retried erased
// order became paid with no run able to claim it, and no refund either.
func TestAFailedOrdersRefundOutlivesItsErasedResult(t *testing.T) {
	for _, by := range []string{"job", "operator", "retry"} {
		t.Run(by, func(t *testing.T) {
			f := newFixture(t, nil)
			ctx := context.Background()
			fence := f.book.fulfil.fence
			co := f.paidStopped(t, "Failed with its result, then erased.")
			claim, _, err := fence.claim(ctx, co.OrderID)
			if err != nil {
				t.Fatal(err)
			}
			key := claimPrefix(co.OrderID, claim) + "speech.mp3"
			if err := f.files.Put(ctx, key, strings.NewReader("ID3 audio"), 9, "audio/mpeg"); err != nil {
				t.Fatal(err)
			}
			if ok, err := fence.setResultFenced(ctx, co.OrderID, claim, key, "speech.mp3", "tok-"+co.OrderID, f.clock.Now().Add(time.Hour)); !ok || err != nil {
				t.Fatal(ok, err)
			}
			if ok, err := fence.failFenced(ctx, co.OrderID, claim, "operator_refund"); !ok || err != nil {
				t.Fatal(ok, err)
			}
			f.clock.Advance(2 * time.Hour) // the link lapses before the refund goes through
			if _, err := f.book.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if o, _ := f.book.orders.Get(ctx, co.OrderID); o.Status != Failed || o.ResultKey != "" {
				t.Fatalf("after the sweep: order %s, result %q; want failed and erased", o.Status, o.ResultKey)
			}
			switch by {
			case "retry":
				if _, err := f.book.Operator().Retry(ctx, Actor{Who: "token", IP: "127.0.0.1", Once: "t1"}, co.OrderID); !isRefused(err) {
					t.Errorf("the operator's Retry of an erased failed order: %v, want refused", err)
				}
				err = f.book.fulfil.refund(ctx, co.OrderID, false)
			case "job":
				err = f.book.fulfil.refund(ctx, co.OrderID, false)
			case "operator":
				var out Outcome
				out, err = f.book.Operator().Refund(ctx, Actor{Who: "token", IP: "127.0.0.1", Once: "r1"}, co.OrderID)
				t.Logf("the operator was told %q", out.Result)
			}
			o, _ := f.book.orders.Get(ctx, co.OrderID)
			calls, _ := f.test.RefundCalls(ctx, o.PaymentIntent)
			refunded, _ := f.test.RefundedIntent(ctx, o.PaymentIntent)
			if err != nil || !refunded || len(calls) != 1 || o.Status != Refunded || len(f.mails(t)) != 1 {
				t.Errorf("refund by the %s: %v; refunded at the provider %v (%d calls), order %s, %d letters; want refunded once, the order refunded, one letter",
					by, err, refunded, len(calls), o.Status, len(f.mails(t)))
			}
		})
	}
}
