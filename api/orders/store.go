package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"parla/providers/sqldb"
)

// ErrNotFound is returned (wrapped) when no order matches.
var ErrNotFound = errors.New("order not found")

// Store keeps orders in SQL: creating them, finding them, and the transitions that happen
// around the checkout (session bound, paid, expired, result swept). A run's own
// transitions are fenced by its claim (fence.go).
type Store struct {
	db *sqldb.DB
}

const orderColumns = `id, service, status, params, email, locale, amount, currency,
	COALESCE(session_id, ''), payment_intent, progress, result_key, result_name,
	COALESCE(link_token, ''), link_expires_at, error, mailed_at, created_at, paid_at, done_at, COALESCE(order_key, '')`

func scanOrder(row sqldb.Scanner) (Order, error) {
	var o Order
	var params string
	var linkExp, mailed, created, paid, done int64
	err := row.Scan(&o.ID, &o.Service, &o.Status, &params, &o.Email, &o.Locale, &o.Amount,
		&o.Currency, &o.SessionID, &o.PaymentIntent, &o.Progress, &o.ResultKey, &o.ResultName,
		&o.LinkToken, &linkExp, &o.Error, &mailed, &created, &paid, &done, &o.Key)
	if errors.Is(err, sql.ErrNoRows) {
		return o, ErrNotFound
	}
	if err != nil {
		return o, err
	}
	o.Params = []byte(params)
	o.LinkExpiresAt = fromMillis(linkExp)
	o.MailedAt = fromMillis(mailed)
	o.CreatedAt = fromMillis(created)
	o.PaidAt = fromMillis(paid)
	o.DoneAt = fromMillis(done)
	return o, nil
}

// Create inserts a new order.
func (s *Store) Create(ctx context.Context, o Order) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO orders
		(id, service, status, params, email, locale, amount, currency, session_id, created_at, order_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Service, o.Status, string(o.Params), o.Email, o.Locale, o.Amount, o.Currency,
		nullable(o.SessionID), millis(o.CreatedAt), nullable(o.Key))
	if err != nil {
		return fmt.Errorf("creating order %s: %w", o.ID, err)
	}
	return nil
}

func (s *Store) one(ctx context.Context, where string, arg any) (Order, error) {
	o, err := scanOrder(s.db.QueryRowContext(ctx, `SELECT `+orderColumns+` FROM orders WHERE `+where, arg))
	if err != nil {
		return o, fmt.Errorf("loading order: %w", err)
	}
	return o, nil
}

// Get loads an order by id.
func (s *Store) Get(ctx context.Context, id string) (Order, error) {
	return s.one(ctx, `id = ?`, id)
}

// BySession loads the order paid through a checkout session.
func (s *Store) BySession(ctx context.Context, sessionID string) (Order, error) {
	return s.one(ctx, `session_id = ?`, sessionID)
}

// ByLinkToken loads the order a download link points to.
func (s *Store) ByLinkToken(ctx context.Context, token string) (Order, error) {
	return s.one(ctx, `link_token = ?`, token)
}

// ByKey lists the orders a page placed under one order key, newest first: all that were
// paid, and the unpaid ones created since the cutoff (their checkout may still be open).
func (s *Store) ByKey(ctx context.Context, svc Service, key string, since time.Time) ([]Order, error) {
	return sqldb.QueryAll(ctx, s.db, scanOrder, `SELECT `+orderColumns+` FROM orders
		WHERE service = ? AND order_key = ? AND (paid_at != 0 OR status != ? OR created_at >= ?)
		ORDER BY created_at DESC`, svc, key, Expired, millis(since))
}

// ExpiredResults lists delivered orders whose link has lapsed and whose file is still kept.
func (s *Store) ExpiredResults(ctx context.Context, now time.Time) ([]Order, error) {
	return sqldb.QueryAll(ctx, s.db, scanOrder, `SELECT `+orderColumns+` FROM orders
		WHERE result_key != '' AND link_expires_at != 0 AND link_expires_at <= ?`, millis(now))
}

// StaleUnpaid lists unpaid orders created before the cutoff.
func (s *Store) StaleUnpaid(ctx context.Context, before time.Time) ([]Order, error) {
	return sqldb.QueryAll(ctx, s.db, scanOrder, `SELECT `+orderColumns+` FROM orders
		WHERE status = ? AND created_at < ?`, AwaitingPayment, millis(before))
}

// SetSession binds an order to its checkout session.
func (s *Store) SetSession(ctx context.Context, id, sessionID string) error {
	return s.db.Update(ctx, "binding session to order "+id,
		`UPDATE orders SET session_id = ? WHERE id = ?`, sessionID, id)
}

// MarkPaid moves an unpaid order to paid; it reports false when the order was already
// past that point (a repeated or late notification), which is not an error.
func (s *Store) MarkPaid(ctx context.Context, id, paymentIntent string, at time.Time) (bool, error) {
	return s.db.Changed(ctx, "marking order "+id+" paid",
		`UPDATE orders SET status = ?, payment_intent = ?, paid_at = ?
		 WHERE id = ? AND (status = ? OR (status = ? AND paid_at = 0))`,
		Paid, paymentIntent, millis(at), id, AwaitingPayment, Expired)
}

// FailPayment marks a just-paid order that cannot be fulfilled as failed for reason,
// keeping the address the payment provider knows (the order's own may be erased) so that
// the refund letter reaches the visitor. It reports false when the order was no longer paid
// (another path moved it first).
func (s *Store) FailPayment(ctx context.Context, id, reason, email string) (bool, error) {
	return s.db.Changed(ctx, "failing the payment of order "+id,
		`UPDATE orders SET status = ?, error = ?, email = CASE WHEN email = '' THEN ? ELSE email END
		 WHERE id = ? AND status = ?`, Failed, reason, email, id, Paid)
}

// Expire marks an unpaid order whose checkout lapsed as expired and erases its data.
func (s *Store) Expire(ctx context.Context, id string) (bool, error) {
	return s.db.Changed(ctx, "expiring order "+id,
		`UPDATE orders SET status = ?, params = '{}', email = '' WHERE id = ? AND status = ?`,
		Expired, id, AwaitingPayment)
}

// DropResult forgets the stored file of a swept order; the link then answers 410.
func (s *Store) DropResult(ctx context.Context, id string) error {
	return s.db.Update(ctx, "dropping result of order "+id,
		`UPDATE orders SET result_key = '', status = CASE WHEN status = ? THEN ? ELSE status END WHERE id = ?`,
		Done, Expired, id)
}

// stillServes tells whether the order still serves resultKey (not erased, not expired).
func (s *Store) stillServes(ctx context.Context, id, resultKey string) (bool, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM orders WHERE id = ? AND result_key = ? AND erased = 0`,
		id, resultKey).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("checking order %s: %w", id, err)
	}
	return n > 0, nil
}

// eventRows remember the payment provider's webhook event ids, so each is handled once.
type eventRows struct {
	db *sqldb.DB
}

// Record remembers an event id; it reports false if it was seen before.
func (e *eventRows) Record(ctx context.Context, id, typ string, at time.Time) (bool, error) {
	return e.db.Changed(ctx, "recording event "+id,
		`INSERT INTO webhook_events (id, type, received_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		id, typ, millis(at))
}

// Forget removes a recorded event so that a retried delivery is processed again (used
// when handling it failed).
func (e *eventRows) Forget(ctx context.Context, id string) error {
	return e.db.Update(ctx, "forgetting event "+id, `DELETE FROM webhook_events WHERE id = ?`, id)
}

// DeleteBefore prunes old event ids (Stripe retries for at most 3 days).
func (e *eventRows) DeleteBefore(ctx context.Context, before time.Time) error {
	return e.db.Update(ctx, "pruning webhook events", `DELETE FROM webhook_events WHERE received_at < ?`, millis(before))
}
