package stripe

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"parla/providers"
)

// ErrSessionExpired is returned (wrapped) by TestCheckout.Pay for a session past its
// expiry: like Stripe's hosted page, it no longer takes money.
var ErrSessionExpired = errors.New("checkout session expired")

// ErrSessionPaid is returned (wrapped) by TestCheckout.Cancel for a session already paid:
// the visitor is sent on to the success URL instead.
var ErrSessionPaid = errors.New("checkout session already paid")

// testCheckoutSchema keeps the built-in checkout's sessions and refunds in the app's
// database, apart from the order book's tables. Times are Unix seconds, as in Stripe.
const testCheckoutSchema = `
CREATE TABLE IF NOT EXISTS test_checkout_sessions (
	id             TEXT PRIMARY KEY,
	order_id       TEXT NOT NULL,
	email          TEXT NOT NULL DEFAULT '',
	locale         TEXT NOT NULL DEFAULT '',
	name           TEXT NOT NULL,
	description    TEXT NOT NULL DEFAULT '',
	image_url      TEXT NOT NULL DEFAULT '',
	amount         INTEGER NOT NULL,
	currency       TEXT NOT NULL,
	success_url    TEXT NOT NULL,
	cancel_url     TEXT NOT NULL,
	status         TEXT NOT NULL,            -- open or complete; expired is derived from expires_at
	payment_status TEXT NOT NULL,            -- unpaid or paid
	payment_intent TEXT NOT NULL DEFAULT '', -- pi_test_…, set when paid
	customer_name  TEXT NOT NULL DEFAULT '',
	created_at     INTEGER NOT NULL,
	expires_at     INTEGER NOT NULL,
	paid_at        INTEGER
);
CREATE INDEX IF NOT EXISTS test_checkout_sessions_order ON test_checkout_sessions (order_id, created_at);
CREATE INDEX IF NOT EXISTS test_checkout_sessions_intent ON test_checkout_sessions (payment_intent);
CREATE TABLE IF NOT EXISTS test_checkout_refunds (
	id              TEXT PRIMARY KEY,
	payment_intent  TEXT NOT NULL UNIQUE,
	idempotency_key TEXT NOT NULL DEFAULT '',
	amount          INTEGER NOT NULL,
	currency        TEXT NOT NULL,
	created_at      INTEGER NOT NULL
);`

// testCustomerName is what the test checkout reports as the cardholder's name, as Stripe
// reports customer_details.name after a card payment.
const testCustomerName = "Test Customer"

// idempotencyWindow is how long Stripe remembers an idempotency key; the test checkout
// answers a repeated checkout request for the same order with the same session within it.
const idempotencyWindow = 24 * time.Hour

// TestCheckout is the built-in checkout used when no Stripe key is configured. Sessions and
// refunds live in the app's SQLite database; the visitor "pays" on a page the app serves at
// /checkout/test/{id}. Nothing is charged. It is safe for concurrent use.
type TestCheckout struct {
	db        *sql.DB
	publicURL string
	now       func() time.Time
}

var _ providers.Payments = (*TestCheckout)(nil)

// TestCheckoutOption changes how NewTestCheckout builds the checkout.
type TestCheckoutOption func(*TestCheckout)

// WithClock makes the test checkout read the time from now instead of time.Now, so tests
// can move sessions past their expiry.
func WithClock(now func() time.Time) TestCheckoutOption {
	return func(tc *TestCheckout) { tc.now = now }
}

// NewTestCheckout creates the checkout's tables if needed. publicURL is the site's base URL
// (https://example.com, no trailing slash needed); session URLs point below it.
func NewTestCheckout(db *sql.DB, publicURL string, opts ...TestCheckoutOption) (*TestCheckout, error) {
	if db == nil {
		return nil, errors.New("test checkout: no database")
	}
	tc := &TestCheckout{db: db, publicURL: strings.TrimRight(publicURL, "/"), now: time.Now}
	for _, o := range opts {
		o(tc)
	}
	if _, err := db.Exec(testCheckoutSchema); err != nil {
		return nil, fmt.Errorf("creating test checkout tables: %w", err)
	}
	return tc, nil
}

// TestSession is one built-in checkout session, as the test page shows it.
type TestSession struct {
	ID            string
	URL           string // the test page, publicURL + /checkout/test/{id}
	OrderID       string
	Email         string
	Locale        string
	Name          string // line item name
	Description   string // line item description
	ImageURL      string
	Amount        int64 // minor units
	Currency      string
	SuccessURL    string // {CHECKOUT_SESSION_ID} already replaced
	CancelURL     string
	Status        string // open, complete, expired
	PaymentStatus string // unpaid, paid
	PaymentIntent string // pi_test_…, once paid
	CustomerName  string // once paid
	CreatedAt     time.Time
	ExpiresAt     time.Time
	PaidAt        time.Time // zero until paid
}

// Checkout returns the session as providers.Payments callers see it.
func (s TestSession) Checkout() providers.CheckoutSession {
	return providers.CheckoutSession{
		ID:            s.ID,
		URL:           s.URL,
		OrderID:       s.OrderID,
		Status:        s.Status,
		PaymentStatus: s.PaymentStatus,
		PaymentIntent: s.PaymentIntent,
		Email:         s.Email,
		Name:          s.CustomerName,
		AmountTotal:   s.Amount,
		Currency:      s.Currency,
	}
}

// TestRefund is a refund the test checkout recorded.
type TestRefund struct {
	ID             string // re_test_…
	PaymentIntent  string
	IdempotencyKey string
	Amount         int64
	Currency       string
	CreatedAt      time.Time
}

// CreateCheckout stores a new open session. Like Stripe with the order-derived idempotency
// key, a second request for the same order within 24 hours returns the first session.
// The expiry is clamped to Stripe's window (30 minutes to 24 hours) so both modes behave
// alike.
func (tc *TestCheckout) CreateCheckout(ctx context.Context, req providers.CheckoutRequest) (providers.CheckoutSession, error) {
	if err := validateRequest(req); err != nil {
		return providers.CheckoutSession{}, err
	}
	now := tc.now()
	var existing string
	err := tc.db.QueryRowContext(ctx,
		`SELECT id FROM test_checkout_sessions WHERE order_id = ? AND created_at > ? ORDER BY created_at DESC LIMIT 1`,
		req.OrderID, now.Add(-idempotencyWindow).Unix()).Scan(&existing)
	switch {
	case err == nil:
		s, err := tc.Get(ctx, existing)
		if err != nil {
			return providers.CheckoutSession{}, err
		}
		return s.Checkout(), nil
	case !errors.Is(err, sql.ErrNoRows):
		return providers.CheckoutSession{}, fmt.Errorf("looking up test checkout for order %s: %w", req.OrderID, err)
	}

	id, err := randomID("cs_test_", 40)
	if err != nil {
		return providers.CheckoutSession{}, err
	}
	_, err = tc.db.ExecContext(ctx, `INSERT INTO test_checkout_sessions
		(id, order_id, email, locale, name, description, image_url, amount, currency,
		 success_url, cancel_url, status, payment_status, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', 'unpaid', ?, ?)`,
		id, req.OrderID, req.Email, req.Locale, req.Name, req.Description, req.ImageURL,
		req.Amount, strings.ToLower(req.Currency), req.SuccessURL, req.CancelURL,
		now.Unix(), clampExpiry(req.ExpiresAt, now).Unix())
	if err != nil {
		return providers.CheckoutSession{}, fmt.Errorf("storing test checkout for order %s: %w", req.OrderID, err)
	}
	s, err := tc.Get(ctx, id)
	if err != nil {
		return providers.CheckoutSession{}, err
	}
	return s.Checkout(), nil
}

// GetCheckout returns the session; an unknown id returns an error wrapping
// providers.ErrSessionNotFound.
func (tc *TestCheckout) GetCheckout(ctx context.Context, sessionID string) (providers.CheckoutSession, error) {
	s, err := tc.Get(ctx, sessionID)
	if err != nil {
		return providers.CheckoutSession{}, err
	}
	return s.Checkout(), nil
}

// Get returns everything the test page shows about a session. An open session past its
// expiry reports status expired. An unknown id returns an error wrapping
// providers.ErrSessionNotFound.
func (tc *TestCheckout) Get(ctx context.Context, sessionID string) (TestSession, error) {
	var (
		s                TestSession
		created, expires int64
		paid             sql.NullInt64
		successURL       string
	)
	err := tc.db.QueryRowContext(ctx, `SELECT id, order_id, email, locale, name, description,
		image_url, amount, currency, success_url, cancel_url, status, payment_status,
		payment_intent, customer_name, created_at, expires_at, paid_at
		FROM test_checkout_sessions WHERE id = ?`, sessionID).Scan(
		&s.ID, &s.OrderID, &s.Email, &s.Locale, &s.Name, &s.Description, &s.ImageURL,
		&s.Amount, &s.Currency, &successURL, &s.CancelURL, &s.Status, &s.PaymentStatus,
		&s.PaymentIntent, &s.CustomerName, &created, &expires, &paid)
	if errors.Is(err, sql.ErrNoRows) {
		return TestSession{}, fmt.Errorf("test checkout session %q: %w", sessionID, providers.ErrSessionNotFound)
	}
	if err != nil {
		return TestSession{}, fmt.Errorf("reading test checkout session %s: %w", sessionID, err)
	}
	s.URL = tc.publicURL + "/checkout/test/" + s.ID
	s.SuccessURL = strings.ReplaceAll(successURL, "{CHECKOUT_SESSION_ID}", s.ID)
	s.CreatedAt = time.Unix(created, 0).UTC()
	s.ExpiresAt = time.Unix(expires, 0).UTC()
	if paid.Valid {
		s.PaidAt = time.Unix(paid.Int64, 0).UTC()
	}
	if s.Status == "open" && !tc.now().Before(s.ExpiresAt) {
		s.Status = "expired"
	}
	return s, nil
}

// Pay marks an open session complete and paid with a new payment intent and returns the
// URL to send the visitor to. Paying a paid session again changes nothing and returns the
// same URL; an expired session returns an error wrapping ErrSessionExpired.
func (tc *TestCheckout) Pay(ctx context.Context, sessionID string) (successURL string, err error) {
	intent, err := randomID("pi_test_", 24)
	if err != nil {
		return "", err
	}
	now := tc.now()
	// The conditions make the update a no-op for a paid or expired session, so two
	// concurrent clicks produce one payment intent.
	_, err = tc.db.ExecContext(ctx, `UPDATE test_checkout_sessions
		SET status = 'complete', payment_status = 'paid', payment_intent = ?,
		    customer_name = ?, paid_at = ?
		WHERE id = ? AND status = 'open' AND expires_at > ?`,
		intent, testCustomerName, now.Unix(), sessionID, now.Unix())
	if err != nil {
		return "", fmt.Errorf("paying test checkout session %s: %w", sessionID, err)
	}
	s, err := tc.Get(ctx, sessionID)
	if err != nil {
		return "", err
	}
	switch s.Status {
	case "complete":
		return s.SuccessURL, nil
	case "expired":
		return "", fmt.Errorf("paying test checkout session %s: %w", sessionID, ErrSessionExpired)
	default:
		return "", fmt.Errorf("paying test checkout session %s: unexpected status %q", sessionID, s.Status)
	}
}

// Cancel returns the URL to send a visitor who gave up. Like Stripe's back link it leaves
// the session as it is (it expires on its own). A paid session returns an error wrapping
// ErrSessionPaid.
func (tc *TestCheckout) Cancel(ctx context.Context, sessionID string) (cancelURL string, err error) {
	s, err := tc.Get(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if s.Status == "complete" {
		return "", fmt.Errorf("cancelling test checkout session %s: %w", sessionID, ErrSessionPaid)
	}
	return s.CancelURL, nil
}

// EraseEmail forgets the customer's e-mail address once it is no longer needed.
func (tc *TestCheckout) EraseEmail(ctx context.Context, sessionID string) error {
	res, err := tc.db.ExecContext(ctx, `UPDATE test_checkout_sessions SET email = '' WHERE id = ?`, sessionID)
	if err != nil {
		return fmt.Errorf("erasing e-mail of test checkout session %s: %w", sessionID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("test checkout session %q: %w", sessionID, providers.ErrSessionNotFound)
	}
	return nil
}

// Refund records a full refund of a paid session's payment intent. A repeated call with
// the same key, or any later call for an intent already refunded, succeeds without a
// second record (as Stripe's idempotency and charge_already_refunded do); a key already
// used for another intent, or an unknown intent, is an error.
func (tc *TestCheckout) Refund(ctx context.Context, paymentIntent, idempotencyKey string) error {
	if paymentIntent == "" {
		return errors.New("refunding: no payment intent")
	}
	tx, err := tc.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("refunding test payment %s: %w", paymentIntent, err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit

	if idempotencyKey != "" {
		var prior string
		err := tx.QueryRowContext(ctx, `SELECT payment_intent FROM test_checkout_refunds WHERE idempotency_key = ?`,
			idempotencyKey).Scan(&prior)
		switch {
		case err == nil && prior == paymentIntent:
			return nil
		case err == nil:
			return fmt.Errorf("refunding test payment %s: idempotency key %q was used for %s", paymentIntent, idempotencyKey, prior)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("refunding test payment %s: %w", paymentIntent, err)
		}
	}
	var (
		amount   int64
		currency string
	)
	err = tx.QueryRowContext(ctx, `SELECT amount, currency FROM test_checkout_sessions
		WHERE payment_intent = ? AND payment_status = 'paid'`, paymentIntent).Scan(&amount, &currency)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("refunding test payment %s: no such paid payment intent", paymentIntent)
	}
	if err != nil {
		return fmt.Errorf("refunding test payment %s: %w", paymentIntent, err)
	}
	id, err := randomID("re_test_", 24)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO test_checkout_refunds
		(id, payment_intent, idempotency_key, amount, currency, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (payment_intent) DO NOTHING`,
		id, paymentIntent, idempotencyKey, amount, currency, tc.now().Unix()); err != nil {
		return fmt.Errorf("recording refund of test payment %s: %w", paymentIntent, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording refund of test payment %s: %w", paymentIntent, err)
	}
	return nil
}

// Refunds lists the recorded refunds, oldest first.
func (tc *TestCheckout) Refunds(ctx context.Context) ([]TestRefund, error) {
	rows, err := tc.db.QueryContext(ctx, `SELECT id, payment_intent, idempotency_key, amount, currency, created_at
		FROM test_checkout_refunds ORDER BY created_at, rowid`)
	if err != nil {
		return nil, fmt.Errorf("listing test refunds: %w", err)
	}
	defer rows.Close()
	var out []TestRefund
	for rows.Next() {
		var (
			r       TestRefund
			created int64
		)
		if err := rows.Scan(&r.ID, &r.PaymentIntent, &r.IdempotencyKey, &r.Amount, &r.Currency, &created); err != nil {
			return nil, fmt.Errorf("listing test refunds: %w", err)
		}
		r.CreatedAt = time.Unix(created, 0).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing test refunds: %w", err)
	}
	return out, nil
}

// RefundedIntent reports whether the payment intent has been refunded.
func (tc *TestCheckout) RefundedIntent(ctx context.Context, paymentIntent string) (bool, error) {
	var n int
	err := tc.db.QueryRowContext(ctx, `SELECT count(*) FROM test_checkout_refunds WHERE payment_intent = ?`,
		paymentIntent).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("looking up refund of test payment %s: %w", paymentIntent, err)
	}
	return n > 0, nil
}

// idAlphabet is what Stripe's ids are made of.
const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomID returns prefix followed by n random letters and digits, like Stripe's ids.
func randomID(prefix string, n int) (string, error) {
	out := make([]byte, 0, len(prefix)+n)
	out = append(out, prefix...)
	buf := make([]byte, n+n/2)
	for len(out) < len(prefix)+n {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("generating %s id: %w", prefix, err)
		}
		for _, b := range buf {
			// Rejecting the top 8 byte values keeps every character equally likely.
			if int(b) < 4*len(idAlphabet) && len(out) < len(prefix)+n {
				out = append(out, idAlphabet[int(b)%len(idAlphabet)])
			}
		}
	}
	return string(out), nil
}
