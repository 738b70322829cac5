package credit

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"parla/api/orders"
	"parla/providers"
	"parla/providers/stripe"
	"parla/providers/testkit"
)

// providerEvent is a signed delivery of a charge or dispute event for a payment intent, as
// Stripe sends it, read by Stripe's webhook parser and handed on as the webhook handler does.
func providerEvent(t *testing.T, id, typ, object, intent string) orders.PaymentEvent {
	t.Helper()
	body := fmt.Sprintf(`{"id": %q, "object": "event", "api_version": "2023-10-16", "created": %d, "type": %q,
		"livemode": false, "pending_webhooks": 1, "data": {"object": {"id": "ch_or_dp_1", "object": %q,
		"amount": 500, "currency": "eur", "payment_intent": %q, "status": "succeeded"}}}`, id, time.Now().Unix(), typ, object, intent)
	s := stripe.New(stripe.Config{SecretKey: "sk_test_123", WebhookSecret: "whsec_test"})
	ev, err := s.ParseWebhook([]byte(body), testkit.SignPayload([]byte(body), "whsec_test", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	return orders.PaymentEvent{ID: ev.ID, Type: ev.Type, Session: ev.Session, PaymentIntent: ev.PaymentIntent}
}

// A key whose payment is refunded at the provider (its dashboard) ends refunded, one whose
// payment is disputed ends revoked: neither is spendable, and the refunded one is not
// refunded again by the operator. A payment no key has is not the shop's.
func TestAPaymentRefundedOrDisputedAtTheProviderEndsItsKey(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	refunded, k := f.buy(500)
	f.clock.advance(time.Second)
	disputed, d := f.buy(500)
	for _, c := range []struct {
		secret string
		key    Key
		ev     orders.PaymentEvent
		status string
	}{
		{refunded, k, providerEvent(t, "evt_1", stripe.EventChargeRefunded, "charge", k.PaymentIntent), StatusRefunded},
		{disputed, d, providerEvent(t, "evt_2", stripe.EventChargeDisputeCreated, "dispute", d.PaymentIntent), StatusRevoked},
	} {
		if handled, err := f.credit.Shop.HandleEvent(ctx, c.ev); !handled || err != nil {
			t.Fatalf("%s: handled %v, %v", c.ev.Type, handled, err)
		}
		if _, err := f.credit.Ledger.Authenticate(ctx, c.secret); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("the key after %s: %v; want it ended", c.ev.Type, err)
		}
		if got, _ := f.credit.Ledger.Key(ctx, c.key.ID); got.Status != c.status || got.Balance != 500_000 {
			t.Errorf("the key after %s: %s with %d; want %s, its balance kept", c.ev.Type, got.Status, got.Balance, c.status)
		}
	}
	if err := f.credit.Keyring.Refund(ctx, k.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("the operator's refund of a key refunded at the provider: %v; want ErrRefused", err)
	}
	if refunds, _ := f.pay.Refunds(ctx); len(refunds) != 0 {
		t.Errorf("refunds %+v, want none of ours", refunds)
	}
	if handled, err := f.credit.Shop.HandleEvent(ctx, providerEvent(t, "evt_3", stripe.EventChargeRefunded, "charge", "pi_other")); handled || err != nil {
		t.Errorf("a payment no key has: handled %v, %v", handled, err)
	}
}

// A purchase's paid amount is always compared with what it bought: a session that took
// nothing (no payment required) or another amount makes no key, and what it took is
// refunded whole.
func TestAPurchasePaidWithAnotherAmountMakesNoKey(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	open := func() Checkout {
		co, err := f.credit.Shop.Open(ctx, Purchase{Amount: 500, Email: "dev@example.com", EmailVerify: "dev@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		return co
	}
	free := open()
	session := providers.CheckoutSession{ID: free.SessionID, Status: "complete", PaymentStatus: "no_payment_required", Currency: "eur"}
	if _, err := f.credit.Shop.HandleEvent(ctx, orders.PaymentEvent{ID: "evt_1", Type: stripe.EventCheckoutCompleted, Session: session}); err != nil {
		t.Fatal(err)
	}
	less := open()
	if _, err := f.pay.Pay(ctx, less.SessionID); err != nil {
		t.Fatal(err)
	}
	session, err := f.pay.GetCheckout(ctx, less.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	session.AmountTotal = 499
	if _, err := f.credit.Shop.HandleEvent(ctx, orders.PaymentEvent{ID: "evt_2", Type: stripe.EventCheckoutCompleted, Session: session}); err != nil {
		t.Fatal(err)
	}
	for _, co := range []Checkout{free, less} {
		var ie *orders.InputError
		if r, err := f.credit.Shop.Result(ctx, co.SessionID); !errors.As(err, &ie) || ie.Code != "order_refunded" {
			t.Errorf("the purchase's result: %+v, %v; want order_refunded, no key", r, err)
		}
	}
	if refunds, _ := f.pay.Refunds(ctx); len(refunds) != 1 || refunds[0].PaymentIntent != session.PaymentIntent {
		t.Errorf("refunds %+v, want the 499 cents' payment refunded whole", refunds)
	}
}
