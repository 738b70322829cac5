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
	"parla/providers/sqldb"
)

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
	amount         BIGINT NOT NULL,
	currency       TEXT NOT NULL,
	success_url    TEXT NOT NULL,
	cancel_url     TEXT NOT NULL,
	status         TEXT NOT NULL,            -- open, complete, or expired (closed early); expired is also derived from expires_at
	payment_status TEXT NOT NULL,            -- unpaid or paid
	payment_intent TEXT NOT NULL DEFAULT '', -- pi_test_…, set when paid
	customer_name  TEXT NOT NULL DEFAULT '',
	created_at     BIGINT NOT NULL,
	expires_at     BIGINT NOT NULL,
	paid_at        BIGINT
);
CREATE INDEX IF NOT EXISTS test_checkout_sessions_order ON test_checkout_sessions (order_id, created_at);
CREATE INDEX IF NOT EXISTS test_checkout_sessions_intent ON test_checkout_sessions (payment_intent);
CREATE TABLE IF NOT EXISTS test_checkout_refunds (
	id              TEXT PRIMARY KEY,
	payment_intent  TEXT NOT NULL UNIQUE,
	idempotency_key TEXT NOT NULL DEFAULT '',
	amount          BIGINT NOT NULL,
	currency        TEXT NOT NULL,
	created_at      BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS test_checkout_refund_calls (
	id              TEXT PRIMARY KEY,         -- rc_test_…
	payment_intent  TEXT NOT NULL,
	idempotency_key TEXT NOT NULL DEFAULT '',
	amount          BIGINT NOT NULL,          -- asked for; 0: all of it
	created_at      BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS test_checkout_refund_calls_intent ON test_checkout_refund_calls (payment_intent, created_at);`

// idempotencyWindow is how long Stripe remembers an idempotency key; the test checkout
// answers a repeated checkout request for the same order with the same session within it.
const idempotencyWindow = 24 * time.Hour

// TestCheckout is the built-in checkout used when no Stripe key is configured. Sessions and
// refunds live in the app's database (SQLite or Postgres); the visitor "pays" on a page the app serves at
// /checkout/test/{id}. Nothing is charged. It is safe for concurrent use.
type TestCheckout struct {
	db       *sqldb.DB
	pagesURL string // the test pages' address, ending in "/"
	now      func() time.Time
}

var _ providers.Payments = (*TestCheckout)(nil)

// NewTestCheckout creates the checkout's tables if needed. pagesURL is where the site
// serves the test pages (https://example.com/checkout/test/: api owns the route); a
// session's page is pagesURL followed by its id. now is the clock sessions expire by
// (nil: time.Now; tests move sessions past their expiry with it).
func NewTestCheckout(db *sqldb.DB, pagesURL string, now func() time.Time) (*TestCheckout, error) {
	if db == nil {
		return nil, errors.New("test checkout: no database")
	}
	if now == nil {
		now = time.Now
	}
	tc := &TestCheckout{db: db, pagesURL: strings.TrimRight(pagesURL, "/") + "/", now: now}
	// Nodes of a cluster start together: one creates the tables, the others find them.
	err := db.Locked(context.Background(), "test checkout schema", func() error {
		_, err := db.Exec(testCheckoutSchema)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating test checkout tables: %w", err)
	}
	return tc, nil
}

// TestSession is one built-in checkout session, as the test page shows it.
type TestSession struct {
	ID            string
	URL           string // the test page: pagesURL + its id
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
	ClosedEarly   bool   // expired by ExpireCheckout before its time: a newer checkout of the order replaced it
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
		return tc.GetCheckout(ctx, existing)
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
	return tc.GetCheckout(ctx, id)
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

// ExpireCheckout closes an open session so that it can no longer be paid (as Stripe's
// expire call does) and returns it as it then is.
func (tc *TestCheckout) ExpireCheckout(ctx context.Context, sessionID string) (providers.CheckoutSession, error) {
	if _, err := tc.db.ExecContext(ctx, `UPDATE test_checkout_sessions SET status = 'expired'
		WHERE id = ? AND status = 'open'`, sessionID); err != nil {
		return providers.CheckoutSession{}, fmt.Errorf("expiring test checkout session %s: %w", sessionID, err)
	}
	return tc.GetCheckout(ctx, sessionID)
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
	s.URL = tc.pagesURL + s.ID
	s.SuccessURL = strings.ReplaceAll(successURL, "{CHECKOUT_SESSION_ID}", s.ID)
	s.CreatedAt = time.Unix(created, 0).UTC()
	s.ExpiresAt = time.Unix(expires, 0).UTC()
	if paid.Valid {
		s.PaidAt = time.Unix(paid.Int64, 0).UTC()
	}
	// Only ExpireCheckout stores expired; time's expiry is worked out here.
	s.ClosedEarly = s.Status == "expired"
	if s.Status == "open" && !tc.now().Before(s.ExpiresAt) {
		s.Status = "expired"
	}
	return s, nil
}

var _ providers.EmailEraser = (*TestCheckout)(nil)

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
