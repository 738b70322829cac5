// Package stripe takes payments: hosted Stripe Checkout sessions, their webhooks and
// refunds (Stripe), and a built-in test checkout (TestCheckout) that stands in for Stripe
// when no key is configured, so the whole product works on a fresh machine. Both implement
// providers.Payments.
package stripe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v76"
	stripeclient "github.com/stripe/stripe-go/v76/client"

	"parla/providers"
	"parla/providers/texts"
)

// Checkout sessions may expire between 30 minutes and 24 hours after creation (Stripe's
// rule). The margins absorb the time between our clock reading and Stripe's.
const (
	minExpiry    = 30 * time.Minute
	maxExpiry    = 24 * time.Hour
	expiryMargin = time.Minute
)

// Config is what the Stripe provider needs, filled from the environment at boot.
type Config struct {
	// SecretKey is the account's secret API key (sk_live_… or sk_test_…).
	SecretKey string
	// WebhookSecret is the endpoint's signing secret (whsec_…); without it every webhook
	// is refused.
	WebhookSecret string
	// BackendURL replaces https://api.stripe.com, for stripe-mock in tests. Optional.
	BackendURL string
	// HTTPClient carries the requests; nil means stripe-go's default client (80 s timeout).
	// Optional, tests use it to watch what is sent.
	HTTPClient *http.Client
}

// Stripe creates hosted checkouts, reads them back and refunds them through the Stripe API.
// It is safe for concurrent use.
type Stripe struct {
	api           *stripeclient.API
	webhookSecret string
}

var _ providers.Payments = (*Stripe)(nil)

// New returns a Stripe provider with its own API client: nothing is read from or written to
// stripe-go's package-level key or backends.
func New(cfg Config) *Stripe {
	bc := &stripego.BackendConfig{
		HTTPClient: cfg.HTTPClient,
		// Errors are returned to the caller, which logs them once; stripe-go's own logger
		// would print every 4xx a second time.
		LeveledLogger: &stripego.LeveledLogger{Level: stripego.LevelNull},
	}
	if cfg.BackendURL != "" {
		bc.URL = stripego.String(cfg.BackendURL)
	}
	backend := stripego.GetBackendWithConfig(stripego.APIBackend, bc)
	backends := &stripego.Backends{API: backend, Connect: backend, Uploads: backend}
	return &Stripe{
		api:           stripeclient.New(cfg.SecretKey, backends),
		webhookSecret: cfg.WebhookSecret,
	}
}

// CreateCheckout creates a payment-mode Checkout session with one line item at the
// request's amount. The idempotency key is derived from the order id, so a retried call for
// the same order returns the same session instead of a second one.
func (s *Stripe) CreateCheckout(ctx context.Context, req providers.CheckoutRequest) (providers.CheckoutSession, error) {
	if err := validateRequest(req); err != nil {
		return providers.CheckoutSession{}, err
	}
	params := checkoutParams(req, time.Now())
	params.Context = ctx
	sess, err := s.api.CheckoutSessions.New(params)
	if err != nil {
		return providers.CheckoutSession{}, fmt.Errorf("creating stripe checkout for order %s: %w: %w", req.OrderID, providers.ErrPaymentProvider, err)
	}
	return fromStripe(sess), nil
}

// checkoutParams builds the Checkout session request; now is when it is sent.
func checkoutParams(req providers.CheckoutRequest, now time.Time) *stripego.CheckoutSessionParams {
	product := &stripego.CheckoutSessionLineItemPriceDataProductDataParams{
		Name: stripego.String(req.Name),
	}
	if req.Description != "" {
		product.Description = stripego.String(req.Description)
	}
	if req.ImageURL != "" {
		product.Images = []*string{stripego.String(req.ImageURL)}
	}
	params := &stripego.CheckoutSessionParams{
		Mode: stripego.String(string(stripego.CheckoutSessionModePayment)),
		LineItems: []*stripego.CheckoutSessionLineItemParams{{
			PriceData: &stripego.CheckoutSessionLineItemPriceDataParams{
				Currency:    stripego.String(strings.ToLower(req.Currency)),
				UnitAmount:  stripego.Int64(req.Amount),
				ProductData: product,
			},
			Quantity: stripego.Int64(1),
		}},
		ClientReferenceID: stripego.String(req.OrderID),
		Locale:            stripego.String(checkoutLocale(req.Locale)),
		SuccessURL:        stripego.String(req.SuccessURL),
		CancelURL:         stripego.String(req.CancelURL),
		ExpiresAt:         stripego.Int64(clampExpiry(req.ExpiresAt, now).Unix()),
		PaymentIntentData: &stripego.CheckoutSessionPaymentIntentDataParams{
			Metadata: map[string]string{"order_id": req.OrderID},
		},
	}
	if req.Email != "" {
		params.CustomerEmail = stripego.String(req.Email)
	}
	params.AddMetadata("order_id", req.OrderID)
	params.SetIdempotencyKey("checkout-" + req.OrderID)
	return params
}

// validateRequest refuses a request Stripe would refuse anyway, before any money moves.
func validateRequest(req providers.CheckoutRequest) error {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"order id", req.OrderID}, {"name", req.Name}, {"currency", req.Currency},
		{"success URL", req.SuccessURL}, {"cancel URL", req.CancelURL},
	} {
		if strings.TrimSpace(f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("checkout request for order %q: missing %s", req.OrderID, strings.Join(missing, ", "))
	}
	if req.Amount <= 0 {
		return fmt.Errorf("checkout request for order %s: amount %d is not positive", req.OrderID, req.Amount)
	}
	return nil
}

// clampExpiry moves the wanted expiry into the window Stripe accepts (30 minutes to 24 hours
// after now, with a minute's margin on each side); the zero time means as late as allowed.
// A retried request whose expiry had to be clamped sends a different expires_at and so
// Stripe refuses the reused idempotency key; the order book's expiry is normally well
// inside the window, where the value is sent unchanged.
func clampExpiry(want, now time.Time) time.Time {
	earliest := now.Add(minExpiry + expiryMargin)
	latest := now.Add(maxExpiry - expiryMargin)
	switch {
	case want.IsZero() || want.After(latest):
		return latest
	case want.Before(earliest):
		return earliest
	default:
		return want
	}
}

// checkoutLocale maps the interface language to one of Stripe Checkout's locales. Checkout
// has no Arabic, so Arabic (and anything unknown) lets Stripe follow the browser.
func checkoutLocale(lang string) string {
	switch texts.LanguageCode(strings.ToLower(lang), false) {
	case "en":
		return "en"
	case "ja":
		return "ja"
	case "es":
		return "es"
	case "ru":
		return "ru"
	case "zh":
		return "zh"
	default:
		return "auto"
	}
}

// GetCheckout reads a session back from Stripe. An unknown id returns an error wrapping
// providers.ErrSessionNotFound.
func (s *Stripe) GetCheckout(ctx context.Context, sessionID string) (providers.CheckoutSession, error) {
	// Every Checkout session id starts with cs_; anything else (including the empty string,
	// which would address the list endpoint) cannot exist, so Stripe is not asked.
	if !strings.HasPrefix(sessionID, "cs_") {
		return providers.CheckoutSession{}, fmt.Errorf("checkout session %q: %w", sessionID, providers.ErrSessionNotFound)
	}
	params := &stripego.CheckoutSessionParams{}
	params.Context = ctx
	sess, err := s.api.CheckoutSessions.Get(sessionID, params)
	if err != nil {
		if hasCode(err, stripego.ErrorCodeResourceMissing) {
			return providers.CheckoutSession{}, fmt.Errorf("checkout session %s: %w: %w", sessionID, providers.ErrSessionNotFound, err)
		}
		return providers.CheckoutSession{}, fmt.Errorf("getting stripe checkout session %s: %w: %w", sessionID, providers.ErrPaymentProvider, err)
	}
	return fromStripe(sess), nil
}

// ExpireCheckout closes an open session at Stripe. A session that is no longer open
// (paid, or expired already) is read back as it is.
func (s *Stripe) ExpireCheckout(ctx context.Context, sessionID string) (providers.CheckoutSession, error) {
	cur, err := s.GetCheckout(ctx, sessionID)
	if err != nil || cur.Status != "open" {
		return cur, err
	}
	params := &stripego.CheckoutSessionExpireParams{}
	params.Context = ctx
	sess, err := s.api.CheckoutSessions.Expire(sessionID, params)
	if err != nil {
		// Paid (or expired) between the two calls: Stripe refuses; tell what it now is.
		if again, err2 := s.GetCheckout(ctx, sessionID); err2 == nil && again.Status != "open" {
			return again, nil
		}
		return providers.CheckoutSession{}, fmt.Errorf("expiring stripe checkout session %s: %w: %w", sessionID, providers.ErrPaymentProvider, err)
	}
	return fromStripe(sess), nil
}

// Refund returns the whole amount of the payment intent. The idempotency key makes a
// repeated call a no-op within Stripe's 24 hours; after that, Stripe answers
// charge_already_refunded, which counts as success too.
func (s *Stripe) Refund(ctx context.Context, paymentIntent, idempotencyKey string) error {
	return s.RefundPart(ctx, paymentIntent, 0, idempotencyKey)
}

var _ providers.PartRefunder = (*Stripe)(nil)

// RefundPart refunds amount (in the payment's smallest unit; 0: all of it) of a payment.
// Its error wraps providers.ErrNotRefunded only when Stripe certainly did not refund
// (refundFateOf); any other error leaves the money's fate unknown.
func (s *Stripe) RefundPart(ctx context.Context, paymentIntent string, amount int64, idempotencyKey string) error {
	if paymentIntent == "" {
		return errors.New("refunding: no payment intent")
	}
	params := &stripego.RefundParams{PaymentIntent: stripego.String(paymentIntent)}
	if amount > 0 {
		params.Amount = stripego.Int64(amount)
	}
	params.Context = ctx
	if idempotencyKey != "" {
		params.SetIdempotencyKey(idempotencyKey)
	}
	_, err := s.api.Refunds.New(params)
	switch refundFateOf(err) {
	case refundDone:
		return nil
	case refundRefused:
		return fmt.Errorf("refunding payment intent %s: %w: %w: %w", paymentIntent, providers.ErrPaymentProvider, providers.ErrNotRefunded, err)
	default:
		return fmt.Errorf("refunding payment intent %s (its fate unknown): %w: %w", paymentIntent, providers.ErrPaymentProvider, err)
	}
}

// refundFate is what Stripe's answer to a refund says of the money.
type refundFate int

const (
	refundUnknown refundFate = iota // it may have gone back or not: only a later answer tells
	refundDone                      // it is back, by this request or an earlier one
	refundRefused                   // it certainly did not go back
)

// refundFateOf reads Stripe's answer (err: nil, or the request's error) to a refund. Only
// a 4xx refusing the request itself is a certain refusal. A 409 (idempotency_key_in_use:
// another request with the key is under way), an idempotency_error (the key was used
// before, by a request that may have refunded), a 429 (rate_limit, lock_timeout), a 408, a
// 5xx, a timeout or a lost connection leave the refund unknown: it may have been made.
// charge_already_refunded says the money is back.
func refundFateOf(err error) refundFate {
	if err == nil {
		return refundDone
	}
	var se *stripego.Error
	if !errors.As(err, &se) {
		return refundUnknown
	}
	switch {
	case se.Code == stripego.ErrorCodeChargeAlreadyRefunded:
		return refundDone
	case se.Type == stripego.ErrorTypeIdempotency,
		se.HTTPStatusCode == http.StatusRequestTimeout,
		se.HTTPStatusCode == http.StatusConflict,
		se.HTTPStatusCode == http.StatusTooManyRequests:
		return refundUnknown
	case se.HTTPStatusCode >= 400 && se.HTTPStatusCode < 500:
		return refundRefused
	default:
		return refundUnknown
	}
}

// hasCode reports whether err is a Stripe API error with the given code.
func hasCode(err error, code stripego.ErrorCode) bool {
	var se *stripego.Error
	return errors.As(err, &se) && se.Code == code
}

// fromStripe maps stripe-go's session onto ours.
func fromStripe(cs *stripego.CheckoutSession) providers.CheckoutSession {
	out := providers.CheckoutSession{
		ID:            cs.ID,
		URL:           cs.URL,
		OrderID:       cs.Metadata["order_id"],
		Status:        string(cs.Status),
		PaymentStatus: string(cs.PaymentStatus),
		Email:         cs.CustomerEmail,
		AmountTotal:   cs.AmountTotal,
		Currency:      string(cs.Currency),
	}
	if out.OrderID == "" {
		out.OrderID = cs.ClientReferenceID
	}
	if cs.PaymentIntent != nil {
		out.PaymentIntent = cs.PaymentIntent.ID
	}
	if cd := cs.CustomerDetails; cd != nil {
		if cd.Email != "" {
			out.Email = cd.Email
		}
		out.Name = cd.Name
	}
	return out
}
