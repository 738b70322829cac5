package orders

import (
	"context"
	"testing"
)

// An event that names no session but a payment (a charge refunded or disputed at the
// provider) goes to OtherSessions, the API credit's hook, which ends the key it bought; one
// that names neither is dropped.
func TestCashierHandsARefundedOrDisputedPaymentToOtherSessions(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	var got []PaymentEvent
	f.book.Cashier.OtherSessions = func(_ context.Context, ev PaymentEvent) (bool, error) {
		got = append(got, ev)
		return true, nil
	}
	for _, ev := range []PaymentEvent{
		{ID: "evt_refunded", Type: "charge.refunded", PaymentIntent: "pi_1"},
		{ID: "evt_other", Type: "payment_intent.succeeded"},
	} {
		if err := f.book.Cashier.HandleEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 1 || got[0].PaymentIntent != "pi_1" || got[0].Type != "charge.refunded" {
		t.Errorf("OtherSessions was handed %+v; want the refunded payment's event only", got)
	}
}
