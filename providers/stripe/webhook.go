package stripe

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"

	"parla/providers"
)

// WebhookTolerance is how old a signature's timestamp may be; older deliveries are refused
// as possible replays (Stripe's own default).
const WebhookTolerance = 5 * time.Minute

// Checkout session event types the order book acts on.
const (
	EventCheckoutCompleted             = "checkout.session.completed"
	EventCheckoutAsyncPaymentSucceeded = "checkout.session.async_payment_succeeded"
	EventCheckoutAsyncPaymentFailed    = "checkout.session.async_payment_failed"
	EventCheckoutExpired               = "checkout.session.expired"
)

// Charge event types: a payment refunded or disputed at the provider (its dashboard, the
// buyer's bank), which ends what it bought. The event carries the charge, or the dispute.
const (
	EventChargeRefunded       = "charge.refunded"
	EventChargeDisputeCreated = "charge.dispute.created"
)

// chargeObjects is the object each charge event type carries.
var chargeObjects = map[string]string{EventChargeRefunded: "charge", EventChargeDisputeCreated: "dispute"}

// ErrBadSignature is returned (wrapped) by ParseWebhook when the Stripe-Signature header is
// missing, malformed, does not match the payload and secret, or is older than
// WebhookTolerance — and when no webhook secret is configured, since then nothing can be
// verified. The handler answers 400 and acts on nothing.
var ErrBadSignature = errors.New("stripe webhook signature not valid")

// ErrBadPayload is returned (wrapped) by ParseWebhook for a correctly signed body that is
// not a Stripe event we can read.
var ErrBadPayload = errors.New("stripe webhook payload not readable")

var _ providers.WebhookParser = (*Stripe)(nil)

// isCheckout reports whether an event of this type carries a checkout session.
func isCheckout(eventType string) bool {
	switch eventType {
	case EventCheckoutCompleted, EventCheckoutAsyncPaymentSucceeded,
		EventCheckoutAsyncPaymentFailed, EventCheckoutExpired:
		return true
	}
	return false
}

// ParseWebhook verifies the Stripe-Signature header over the raw request body and decodes
// the event.
//
// The event's API version is deliberately not required to match stripe-go's (2023-10-16):
// a webhook endpoint created with another version would otherwise fail every delivery and
// leave fulfilment to the confirmation page alone. That is safe because the session is
// decoded into our own small struct holding only fields whose shape has not changed across
// versions, never into stripe-go's full types.
func (s *Stripe) ParseWebhook(payload []byte, sigHeader string) (providers.WebhookEvent, error) {
	if s.webhookSecret == "" {
		return providers.WebhookEvent{}, fmt.Errorf("%w: no webhook secret configured", ErrBadSignature)
	}
	ev, err := webhook.ConstructEventWithOptions(payload, sigHeader, s.webhookSecret, webhook.ConstructEventOptions{
		Tolerance:                WebhookTolerance,
		IgnoreAPIVersionMismatch: true,
	})
	if err != nil {
		if isSignatureError(err) {
			return providers.WebhookEvent{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
		}
		return providers.WebhookEvent{}, fmt.Errorf("%w: %w", ErrBadPayload, err)
	}
	out := providers.WebhookEvent{
		ID:         ev.ID,
		Type:       string(ev.Type),
		Created:    time.Unix(ev.Created, 0).UTC(),
		APIVersion: ev.APIVersion,
	}
	if out.ID == "" || out.Type == "" {
		return providers.WebhookEvent{}, fmt.Errorf("%w: event without id or type", ErrBadPayload)
	}
	if _, charge := chargeObjects[out.Type]; !charge && !isCheckout(out.Type) {
		return out, nil
	}
	if ev.Data == nil || len(ev.Data.Raw) == 0 {
		return providers.WebhookEvent{}, fmt.Errorf("%w: %s event %s has no data object", ErrBadPayload, out.Type, out.ID)
	}
	if !isCheckout(out.Type) {
		return chargeEvent(out, ev.Data.Raw)
	}
	var ws webhookSession
	if err := json.Unmarshal(ev.Data.Raw, &ws); err != nil {
		return providers.WebhookEvent{}, fmt.Errorf("%w: decoding session of %s event %s: %w", ErrBadPayload, out.Type, out.ID, err)
	}
	if ws.Object != "checkout.session" || ws.ID == "" {
		return providers.WebhookEvent{}, fmt.Errorf("%w: %s event %s carries a %q, not a checkout session", ErrBadPayload, out.Type, out.ID, ws.Object)
	}
	out.Session = ws.session()
	return out, nil
}

// chargeEvent reads the payment intent of a charge event's charge or dispute; one with
// none (a charge made without a payment intent) names no payment of ours.
func chargeEvent(out providers.WebhookEvent, raw json.RawMessage) (providers.WebhookEvent, error) {
	var obj struct {
		Object        string          `json:"object"`
		PaymentIntent json.RawMessage `json:"payment_intent"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return providers.WebhookEvent{}, fmt.Errorf("%w: decoding the object of %s event %s: %w", ErrBadPayload, out.Type, out.ID, err)
	}
	if obj.Object != chargeObjects[out.Type] {
		return providers.WebhookEvent{}, fmt.Errorf("%w: %s event %s carries a %q, not a %s", ErrBadPayload, out.Type, out.ID,
			obj.Object, chargeObjects[out.Type])
	}
	out.PaymentIntent = expandableID(obj.PaymentIntent)
	return out, nil
}

// isSignatureError reports whether the webhook package refused the signature (as opposed
// to the JSON).
func isSignatureError(err error) bool {
	return errors.Is(err, webhook.ErrNotSigned) || errors.Is(err, webhook.ErrInvalidHeader) ||
		errors.Is(err, webhook.ErrNoValidSignature) || errors.Is(err, webhook.ErrTooOld)
}

// webhookSession is the part of a Checkout session object we read from events.
type webhookSession struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	URL               string            `json:"url"`
	Status            string            `json:"status"`
	PaymentStatus     string            `json:"payment_status"`
	PaymentIntent     json.RawMessage   `json:"payment_intent"` // id, or object when expanded
	ClientReferenceID string            `json:"client_reference_id"`
	Metadata          map[string]string `json:"metadata"`
	CustomerEmail     string            `json:"customer_email"`
	CustomerDetails   *struct {
		Email string `json:"email"`
		Name  string `json:"name"`
	} `json:"customer_details"`
	AmountTotal int64  `json:"amount_total"`
	Currency    string `json:"currency"`
}

func (w webhookSession) session() providers.CheckoutSession {
	out := providers.CheckoutSession{
		ID:            w.ID,
		URL:           w.URL,
		OrderID:       w.Metadata["order_id"],
		Status:        w.Status,
		PaymentStatus: w.PaymentStatus,
		PaymentIntent: expandableID(w.PaymentIntent),
		Email:         w.CustomerEmail,
		AmountTotal:   w.AmountTotal,
		Currency:      w.Currency,
	}
	if out.OrderID == "" {
		out.OrderID = w.ClientReferenceID
	}
	if cd := w.CustomerDetails; cd != nil {
		if cd.Email != "" {
			out.Email = cd.Email
		}
		out.Name = cd.Name
	}
	return out
}

// expandableID reads a Stripe expandable field: a string id, an object with an id, or null.
func expandableID(raw json.RawMessage) string {
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id
	}
	var obj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.ID
	}
	return ""
}
