package stripe

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"parla/providers"
	"parla/providers/sqldb"
	"time"
)

// Moving a built-in checkout session on: paying, cancelling, refunding.

// ErrSessionExpired is returned (wrapped) by TestCheckout.Pay for a session past its
// expiry: like Stripe's hosted page, it no longer takes money.
var ErrSessionExpired = errors.New("checkout session expired")

// ErrSessionPaid is returned (wrapped) by TestCheckout.Cancel for a session already paid:
// the visitor is sent on to the success URL instead.
var ErrSessionPaid = errors.New("checkout session already paid")

// testCustomerName is what the test checkout reports as the cardholder's name, as Stripe
// reports customer_details.name after a card payment.
const testCustomerName = "Test Customer"

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

// TestRefund is a refund the test checkout recorded.
type TestRefund struct {
	ID             string // re_test_…
	PaymentIntent  string
	IdempotencyKey string
	Amount         int64
	Currency       string
	CreatedAt      time.Time
}

// ErrRefundedTwice is returned (wrapped) by TestCheckout.Refund for a payment already
// refunded under another idempotency key: the caller refunded one payment twice. Stripe
// would refund the rest of a part-refunded payment, or answer charge_already_refunded; the
// test checkout keeps one refund per payment and makes a second one an error a test sees
// (RefundCalls lists every call), never absorbs it.
var ErrRefundedTwice = errors.New("the payment was refunded before, under another idempotency key")

// Refund records a full refund of a paid session's payment intent. A repeated call with
// the same key succeeds without a second record (Stripe's idempotency); a call for an
// intent refunded under another key wraps ErrRefundedTwice; a key already used for another
// intent, or an unknown intent, is an error. Every call is recorded (RefundCalls).
func (tc *TestCheckout) Refund(ctx context.Context, paymentIntent, idempotencyKey string) error {
	return tc.RefundPart(ctx, paymentIntent, 0, idempotencyKey)
}

var _ providers.PartRefunder = (*TestCheckout)(nil)

// RefundPart records a refund of part of a payment (amount; 0: all of it), as Refund does;
// more than was paid is an error. One refund per payment intent, as the test checkout keeps.
func (tc *TestCheckout) RefundPart(ctx context.Context, paymentIntent string, part int64, idempotencyKey string) error {
	if paymentIntent == "" {
		return errors.New("refunding: no payment intent")
	}
	if err := tc.recordCall(ctx, paymentIntent, part, idempotencyKey); err != nil {
		return err
	}
	err := tc.refundOnce(ctx, paymentIntent, part, idempotencyKey)
	if errors.Is(err, errNotRecorded) {
		// A concurrent call recorded its refund first: answer as it now stands.
		if again := refundedBefore(ctx, tc.db, paymentIntent, idempotencyKey); !errors.Is(again, errNotRefundedYet) {
			return again
		}
	}
	return err
}

// errNotRecorded is wrapped by refundOnce when its refund could not be recorded (rolled
// back: certainly not refunded).
var errNotRecorded = fmt.Errorf("refund not recorded (%w)", providers.ErrNotRefunded)

// errNotRefundedYet is refundedBefore's answer for a payment intent with no refund.
var errNotRefundedYet = errors.New("not refunded yet")

// refundOnce records the refund of paymentIntent unless it was refunded before.
func (tc *TestCheckout) refundOnce(ctx context.Context, paymentIntent string, part int64, idempotencyKey string) error {
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
		case err == nil && prior != paymentIntent:
			return fmt.Errorf("refunding test payment %s: idempotency key %q was used for %s", paymentIntent, idempotencyKey, prior)
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("refunding test payment %s: %w", paymentIntent, err)
		}
	}
	if err := refundedBefore(ctx, tx, paymentIntent, idempotencyKey); !errors.Is(err, errNotRefundedYet) {
		return err
	}
	amount, currency, err := refundable(ctx, tx, paymentIntent, part)
	if err != nil {
		return err
	}
	id, err := randomID("re_test_", 24)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO test_checkout_refunds
		(id, payment_intent, idempotency_key, amount, currency, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		id, paymentIntent, idempotencyKey, amount, currency, tc.now().Unix()); err != nil {
		return fmt.Errorf("recording refund of test payment %s: %w: %w", paymentIntent, errNotRecorded, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording refund of test payment %s: %w", paymentIntent, err)
	}
	return nil
}

// refundable is the amount (part; 0: all of it) and currency a refund of a paid payment
// intent returns; an error for an intent not paid, or a part more than was paid.
func refundable(ctx context.Context, q rowQuerier, paymentIntent string, part int64) (amount int64, currency string, err error) {
	err = q.QueryRowContext(ctx, `SELECT amount, currency FROM test_checkout_sessions
		WHERE payment_intent = ? AND payment_status = 'paid'`, paymentIntent).Scan(&amount, &currency)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, "", fmt.Errorf("refunding test payment %s: %w: no such paid payment intent", paymentIntent, providers.ErrNotRefunded)
	case err != nil:
		return 0, "", fmt.Errorf("refunding test payment %s: %w", paymentIntent, err)
	case part > amount:
		return 0, "", fmt.Errorf("refunding test payment %s: %d is more than the %d paid", paymentIntent, part, amount)
	case part > 0:
		return part, currency, nil
	}
	return amount, currency, nil
}

// refundedBefore answers a refund of a payment intent already refunded: nil for the
// same idempotency key (Stripe's replay of its first answer), an error wrapping
// ErrRefundedTwice for another one; errNotRefundedYet when it was not refunded.
func refundedBefore(ctx context.Context, q rowQuerier, paymentIntent, idempotencyKey string) error {
	var prior string
	err := q.QueryRowContext(ctx, `SELECT idempotency_key FROM test_checkout_refunds WHERE payment_intent = ?`,
		paymentIntent).Scan(&prior)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return errNotRefundedYet
	case err != nil:
		return fmt.Errorf("refunding test payment %s: %w", paymentIntent, err)
	case idempotencyKey != "" && prior == idempotencyKey:
		return nil
	default:
		return fmt.Errorf("refunding test payment %s under key %q (refunded under %q): %w", paymentIntent, idempotencyKey, prior, ErrRefundedTwice)
	}
}

// rowQuerier is a database or a transaction in it.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sqldb.Row
}

// recordCall keeps a refund call as it arrives, whatever its answer. Not recorded, it is
// not carried out: certainly not refunded.
func (tc *TestCheckout) recordCall(ctx context.Context, paymentIntent string, part int64, idempotencyKey string) error {
	id, err := randomID("rc_test_", 24)
	if err != nil {
		return err
	}
	if _, err := tc.db.ExecContext(ctx, `INSERT INTO test_checkout_refund_calls
		(id, payment_intent, idempotency_key, amount, created_at) VALUES (?, ?, ?, ?, ?)`,
		id, paymentIntent, idempotencyKey, part, tc.now().Unix()); err != nil {
		return fmt.Errorf("recording a refund call for test payment %s: %w: %w", paymentIntent, providers.ErrNotRefunded, err)
	}
	return nil
}

// TestRefundCall is one refund call the test checkout received, whatever it answered.
type TestRefundCall struct {
	PaymentIntent  string
	IdempotencyKey string
	Amount         int64 // asked for; 0: all of it
	CreatedAt      time.Time
}

// RefundCalls lists the refund calls received for a payment intent, oldest first (calls
// of one second in no particular order).
func (tc *TestCheckout) RefundCalls(ctx context.Context, paymentIntent string) ([]TestRefundCall, error) {
	return sqldb.QueryAll(ctx, tc.db, func(row sqldb.Scanner) (TestRefundCall, error) {
		var (
			c       TestRefundCall
			created int64
		)
		err := row.Scan(&c.PaymentIntent, &c.IdempotencyKey, &c.Amount, &created)
		c.CreatedAt = time.Unix(created, 0).UTC()
		return c, err
	}, `SELECT payment_intent, idempotency_key, amount, created_at FROM test_checkout_refund_calls
		WHERE payment_intent = ? ORDER BY created_at`, paymentIntent)
}

// Refunds lists the recorded refunds, oldest first.
func (tc *TestCheckout) Refunds(ctx context.Context) ([]TestRefund, error) {
	rows, err := tc.db.QueryContext(ctx, `SELECT id, payment_intent, idempotency_key, amount, currency, created_at
		FROM test_checkout_refunds ORDER BY created_at, id`)
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
