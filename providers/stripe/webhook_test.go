package stripe

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"

	"parla/providers"
	"parla/providers/testkit"
)

const testWebhookSecret = "whsec_test_secret"

// completedEvent is a checkout.session.completed delivery as Stripe sends it (trimmed to the
// fields that matter plus a few that do not).
const completedEvent = `{
  "id": "evt_1",
  "object": "event",
  "api_version": "2023-10-16",
  "created": 1700000000,
  "type": "checkout.session.completed",
  "livemode": false,
  "pending_webhooks": 1,
  "request": {"id": null, "idempotency_key": null},
  "data": {"object": {
    "id": "cs_test_abc",
    "object": "checkout.session",
    "url": null,
    "status": "complete",
    "payment_status": "paid",
    "payment_intent": "pi_1",
    "client_reference_id": "ord_1",
    "metadata": {"order_id": "ord_1"},
    "customer_email": "a@example.com",
    "customer_details": {"email": "a@example.com", "name": "Ada Lovelace", "phone": null},
    "amount_total": 99,
    "currency": "eur",
    "mode": "payment"
  }}
}`

func TestParseWebhook(t *testing.T) {
	s := New(Config{SecretKey: "sk_test_123", WebhookSecret: testWebhookSecret})
	now := time.Now()
	sign := func(body string) string { return testkit.SignPayload([]byte(body), testWebhookSecret, now) }

	asyncExpanded := strings.NewReplacer(
		`"checkout.session.completed"`, `"checkout.session.async_payment_succeeded"`,
		`"payment_intent": "pi_1"`, `"payment_intent": {"id": "pi_2", "object": "payment_intent"}`,
		`"metadata": {"order_id": "ord_1"}`, `"metadata": {}`,
		`"api_version": "2023-10-16"`, `"api_version": "2024-06-20"`,
	).Replace(completedEvent)
	expired := strings.NewReplacer(
		`"checkout.session.completed"`, `"checkout.session.expired"`,
		`"status": "complete"`, `"status": "expired"`,
		`"payment_status": "paid"`, `"payment_status": "unpaid"`,
		`"payment_intent": "pi_1"`, `"payment_intent": null`,
		`"customer_details": {"email": "a@example.com", "name": "Ada Lovelace", "phone": null}`, `"customer_details": null`,
	).Replace(completedEvent)
	otherType := `{"id":"evt_9","object":"event","api_version":"2023-10-16","created":1700000001,
		"type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","object":"payment_intent"}}}`

	cases := []struct {
		name     string
		body     string
		header   string
		wantErr  error // nil for success
		wantType string
		want     providers.CheckoutSession
	}{
		{
			name: "completed", body: completedEvent, header: sign(completedEvent),
			wantType: EventCheckoutCompleted,
			want: providers.CheckoutSession{
				ID: "cs_test_abc", OrderID: "ord_1", Status: "complete", PaymentStatus: "paid",
				PaymentIntent: "pi_1", Email: "a@example.com", Name: "Ada Lovelace", AmountTotal: 99, Currency: "eur",
			},
		},
		{
			name: "async success, expanded intent, other API version, order from client_reference_id",
			body: asyncExpanded, header: sign(asyncExpanded),
			wantType: EventCheckoutAsyncPaymentSucceeded,
			want: providers.CheckoutSession{
				ID: "cs_test_abc", OrderID: "ord_1", Status: "complete", PaymentStatus: "paid",
				PaymentIntent: "pi_2", Email: "a@example.com", Name: "Ada Lovelace", AmountTotal: 99, Currency: "eur",
			},
		},
		{
			name: "expired", body: expired, header: sign(expired),
			wantType: EventCheckoutExpired,
			want: providers.CheckoutSession{
				ID: "cs_test_abc", OrderID: "ord_1", Status: "expired", PaymentStatus: "unpaid",
				Email: "a@example.com", AmountTotal: 99, Currency: "eur",
			},
		},
		{
			name: "other event type gives the type only", body: otherType, header: sign(otherType),
			wantType: "payment_intent.succeeded",
		},
		{
			name: "one of several signatures valid (secret rotation)", body: completedEvent,
			header:   sign(completedEvent) + ",v1=" + strings.Repeat("ab", 32),
			wantType: EventCheckoutCompleted,
			want: providers.CheckoutSession{
				ID: "cs_test_abc", OrderID: "ord_1", Status: "complete", PaymentStatus: "paid",
				PaymentIntent: "pi_1", Email: "a@example.com", Name: "Ada Lovelace", AmountTotal: 99, Currency: "eur",
			},
		},
		{
			name: "tampered body", body: strings.Replace(completedEvent, `"amount_total": 99`, `"amount_total": 1`, 1),
			header: sign(completedEvent), wantErr: ErrBadSignature,
		},
		{
			name: "wrong secret", body: completedEvent,
			header: testkit.SignPayload([]byte(completedEvent), "whsec_other", now), wantErr: ErrBadSignature,
		},
		{
			name: "stale timestamp", body: completedEvent,
			header:  testkit.SignPayload([]byte(completedEvent), testWebhookSecret, now.Add(-WebhookTolerance-time.Minute)),
			wantErr: ErrBadSignature,
		},
		{name: "missing header", body: completedEvent, header: "", wantErr: ErrBadSignature},
		{name: "malformed header", body: completedEvent, header: "garbage", wantErr: ErrBadSignature},
		{
			name: "only a v0 signature", body: completedEvent,
			header: strings.Replace(sign(completedEvent), "v1=", "v0=", 1), wantErr: ErrBadSignature,
		},
		{name: "signed but not JSON", body: "not json", header: sign("not json"), wantErr: ErrBadPayload},
		{
			name: "checkout event without a session", body: `{"id":"evt_2","type":"checkout.session.completed","data":{"object":{"id":"pi_1","object":"payment_intent"}}}`,
			header: sign(`{"id":"evt_2","type":"checkout.session.completed","data":{"object":{"id":"pi_1","object":"payment_intent"}}}`), wantErr: ErrBadPayload,
		},
		{name: "event without id", body: `{"type":"ping"}`, header: sign(`{"type":"ping"}`), wantErr: ErrBadPayload},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := s.ParseWebhook([]byte(tc.body), tc.header)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ParseWebhook = %+v, %v; want %v", ev, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseWebhook: %v", err)
			}
			if ev.Type != tc.wantType || ev.ID == "" || ev.Created.IsZero() {
				t.Errorf("event = %q %q %v, want type %q with id and time", ev.ID, ev.Type, ev.Created, tc.wantType)
			}
			if ev.Session != tc.want {
				t.Errorf("session =\n %+v\nwant\n %+v", ev.Session, tc.want)
			}
			if isCheckout(ev.Type) != (tc.want.ID != "") {
				t.Errorf("IsCheckout = %v for %s", isCheckout(ev.Type), ev.Type)
			}
		})
	}

	t.Run("fields", func(t *testing.T) {
		ev, err := s.ParseWebhook([]byte(completedEvent), sign(completedEvent))
		if err != nil {
			t.Fatal(err)
		}
		if ev.ID != "evt_1" || !ev.Created.Equal(time.Unix(1700000000, 0)) || ev.APIVersion != "2023-10-16" {
			t.Errorf("event = %+v", ev)
		}
	})

	t.Run("no webhook secret refuses everything", func(t *testing.T) {
		open := New(Config{SecretKey: "sk_test_123"})
		_, err := open.ParseWebhook([]byte(completedEvent), testkit.SignPayload([]byte(completedEvent), "", now))
		if !errors.Is(err, ErrBadSignature) {
			t.Fatalf("ParseWebhook without a secret = %v, want ErrBadSignature", err)
		}
	})
}

// SignPayload must produce exactly what Stripe's own library produces and accepts.
func TestSignPayload(t *testing.T) {
	at := time.Unix(1700000000, 0)
	payload := []byte(`{"id":"evt_1"}`)
	want := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload: payload, Secret: testWebhookSecret, Timestamp: at,
	}).Header
	if got := testkit.SignPayload(payload, testWebhookSecret, at); got != want {
		t.Errorf("SignPayload = %q, want %q", got, want)
	}
	if err := webhook.ValidatePayloadWithTolerance(payload, testkit.SignPayload(payload, testWebhookSecret, time.Now()), testWebhookSecret, time.Minute); err != nil {
		t.Errorf("stripe-go refuses our signature: %v", err)
	}
}

// chargeRefundedEvent is a charge.refunded delivery as Stripe sends it (trimmed).
const chargeRefundedEvent = `{
  "id": "evt_3", "object": "event", "api_version": "2023-10-16", "created": 1700000100,
  "type": "charge.refunded", "livemode": false, "pending_webhooks": 1,
  "data": {"object": {
    "id": "ch_1", "object": "charge", "amount": 500, "amount_refunded": 500, "currency": "eur",
    "paid": true, "refunded": true, "payment_intent": "pi_1", "status": "succeeded"
  }}
}`

// disputeCreatedEvent is a charge.dispute.created delivery as Stripe sends it (trimmed), its
// payment intent expanded.
const disputeCreatedEvent = `{
  "id": "evt_4", "object": "event", "api_version": "2024-06-20", "created": 1700000200,
  "type": "charge.dispute.created", "livemode": false, "pending_webhooks": 1,
  "data": {"object": {
    "id": "dp_1", "object": "dispute", "amount": 500, "charge": "ch_1", "currency": "eur",
    "payment_intent": {"id": "pi_2", "object": "payment_intent"}, "reason": "fraudulent", "status": "needs_response"
  }}
}`

// A refund or a dispute made at Stripe names its payment intent; an event whose object is
// not what its type carries is unreadable.
func TestParseWebhookChargeEvents(t *testing.T) {
	s := New(Config{SecretKey: "sk_test_123", WebhookSecret: testWebhookSecret})
	sign := func(body string) string { return testkit.SignPayload([]byte(body), testWebhookSecret, time.Now()) }
	for body, want := range map[string]providers.WebhookEvent{
		chargeRefundedEvent: {ID: "evt_3", Type: EventChargeRefunded, PaymentIntent: "pi_1"},
		disputeCreatedEvent: {ID: "evt_4", Type: EventChargeDisputeCreated, PaymentIntent: "pi_2"},
		strings.Replace(chargeRefundedEvent, `"payment_intent": "pi_1"`, `"payment_intent": null`, 1): {ID: "evt_3", Type: EventChargeRefunded},
	} {
		ev, err := s.ParseWebhook([]byte(body), sign(body))
		if err != nil || ev.ID != want.ID || ev.Type != want.Type || ev.PaymentIntent != want.PaymentIntent || ev.Session.ID != "" {
			t.Errorf("ParseWebhook = %+v, %v; want %+v", ev, err, want)
		}
	}
	wrong := strings.Replace(disputeCreatedEvent, `"object": "dispute"`, `"object": "charge"`, 1)
	if ev, err := s.ParseWebhook([]byte(wrong), sign(wrong)); !errors.Is(err, ErrBadPayload) {
		t.Errorf("a dispute event carrying a charge: %+v, %v; want ErrBadPayload", ev, err)
	}
}
