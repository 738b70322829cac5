package orders

import (
	"context"
	"testing"
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
