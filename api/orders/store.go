package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// ErrNotFound is returned (wrapped) when no order matches.
var ErrNotFound = errors.New("order not found")

// OpenSQLite opens the app's SQLite database with the settings River and the store need:
// WAL, a busy timeout, immediate write transactions and a single connection.
func OpenSQLite(path string) (*sql.DB, error) {
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return db, nil
}

// migrations are applied in order, each once; append, never edit.
var migrations = []string{
	`CREATE TABLE orders (
		id              TEXT PRIMARY KEY,
		service         TEXT NOT NULL,
		status          TEXT NOT NULL,
		params          TEXT NOT NULL DEFAULT '{}',
		email           TEXT NOT NULL DEFAULT '',
		locale          TEXT NOT NULL DEFAULT 'en',
		amount          INTEGER NOT NULL,
		currency        TEXT NOT NULL,
		session_id      TEXT,
		payment_intent  TEXT NOT NULL DEFAULT '',
		progress        INTEGER NOT NULL DEFAULT 0,
		result_key      TEXT NOT NULL DEFAULT '',
		result_name     TEXT NOT NULL DEFAULT '',
		link_token      TEXT,
		link_expires_at INTEGER NOT NULL DEFAULT 0,
		error           TEXT NOT NULL DEFAULT '',
		mailed_at       INTEGER NOT NULL DEFAULT 0,
		created_at      INTEGER NOT NULL,
		paid_at         INTEGER NOT NULL DEFAULT 0,
		done_at         INTEGER NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX orders_session ON orders(session_id);
	CREATE UNIQUE INDEX orders_link_token ON orders(link_token);
	CREATE INDEX orders_status_created ON orders(status, created_at);
	CREATE TABLE webhook_events (
		id          TEXT PRIMARY KEY,
		type        TEXT NOT NULL,
		received_at INTEGER NOT NULL
	);`,
	`CREATE TABLE uploads (
		id          TEXT PRIMARY KEY,
		file_name   TEXT NOT NULL,
		size        INTEGER NOT NULL,
		duration_ms INTEGER NOT NULL,
		order_id    TEXT NOT NULL DEFAULT '',
		created_at  INTEGER NOT NULL
	);
	CREATE INDEX uploads_created ON uploads(created_at);`,
}

// Store keeps orders in SQL.
type Store struct {
	db *sql.DB
}

// NewStore migrates db to the latest schema and returns a store on it.
func NewStore(ctx context.Context, db *sql.DB) (*Store, error) {
	if err := migrate(ctx, db); err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`); err != nil {
		return fmt.Errorf("creating schema_migrations: %w", err)
	}
	for i, m := range migrations {
		version := i + 1
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migration %d: %w", version, err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", version, err)
		}
		if n > 0 {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, m); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", version, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version) VALUES (?)`, version); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", version, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", version, err)
		}
	}
	return nil
}

const orderColumns = `id, service, status, params, email, locale, amount, currency,
	COALESCE(session_id, ''), payment_intent, progress, result_key, result_name,
	COALESCE(link_token, ''), link_expires_at, error, mailed_at, created_at, paid_at, done_at`

func scanOrder(row interface{ Scan(...any) error }) (Order, error) {
	var o Order
	var params string
	var linkExp, mailed, created, paid, done int64
	err := row.Scan(&o.ID, &o.Service, &o.Status, &params, &o.Email, &o.Locale, &o.Amount,
		&o.Currency, &o.SessionID, &o.PaymentIntent, &o.Progress, &o.ResultKey, &o.ResultName,
		&o.LinkToken, &linkExp, &o.Error, &mailed, &created, &paid, &done)
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

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Create inserts a new order.
func (s *Store) Create(ctx context.Context, o Order) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO orders
		(id, service, status, params, email, locale, amount, currency, session_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Service, o.Status, string(o.Params), o.Email, o.Locale, o.Amount, o.Currency,
		nullable(o.SessionID), millis(o.CreatedAt))
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

// exec runs an update and reports whether it changed a row.
func (s *Store) exec(ctx context.Context, what, q string, args ...any) (bool, error) {
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n > 0, nil
}

// SetSession binds an order to its checkout session.
func (s *Store) SetSession(ctx context.Context, id, sessionID string) error {
	_, err := s.exec(ctx, "binding session to order "+id,
		`UPDATE orders SET session_id = ? WHERE id = ?`, sessionID, id)
	return err
}

// MarkPaid moves an unpaid order to paid; it reports false when the order was already
// past that point (a repeated or late notification), which is not an error.
func (s *Store) MarkPaid(ctx context.Context, id, paymentIntent string, at time.Time) (bool, error) {
	return s.exec(ctx, "marking order "+id+" paid",
		`UPDATE orders SET status = ?, payment_intent = ?, paid_at = ?
		 WHERE id = ? AND (status = ? OR (status = ? AND paid_at = 0))`,
		Paid, paymentIntent, millis(at), id, AwaitingPayment, Expired)
}

// StartProcessing marks a paid order as being worked on.
func (s *Store) StartProcessing(ctx context.Context, id string) error {
	_, err := s.exec(ctx, "starting order "+id,
		`UPDATE orders SET status = ? WHERE id = ? AND status IN (?, ?)`, Processing, id, Paid, Processing)
	return err
}

// SetProgress records progress (0–100) of a running order.
func (s *Store) SetProgress(ctx context.Context, id string, percent int) error {
	percent = min(max(percent, 0), 100)
	_, err := s.exec(ctx, "recording progress of order "+id,
		`UPDATE orders SET progress = ? WHERE id = ? AND status = ?`, percent, id, Processing)
	return err
}

// SetResult records the stored result and its download link. It keeps an existing link,
// so a repeated step never hands out a second one.
func (s *Store) SetResult(ctx context.Context, id, key, name, token string, expires time.Time) error {
	_, err := s.exec(ctx, "recording result of order "+id,
		`UPDATE orders SET result_key = ?, result_name = ?,
		   link_token = COALESCE(link_token, ?),
		   link_expires_at = CASE WHEN link_expires_at = 0 THEN ? ELSE link_expires_at END,
		   progress = 100
		 WHERE id = ?`, key, name, token, millis(expires), id)
	return err
}

// MarkMailed records that the visitor was told and erases the address.
func (s *Store) MarkMailed(ctx context.Context, id string, at time.Time) error {
	_, err := s.exec(ctx, "recording mail of order "+id,
		`UPDATE orders SET mailed_at = ?, email = '' WHERE id = ?`, millis(at), id)
	return err
}

// Finish marks an order done and erases its parameters (the visitor's text).
func (s *Store) Finish(ctx context.Context, id string, at time.Time) error {
	_, err := s.exec(ctx, "finishing order "+id,
		`UPDATE orders SET status = ?, done_at = ?, params = '{}', progress = 100
		 WHERE id = ? AND status IN (?, ?)`, Done, millis(at), id, Paid, Processing)
	return err
}

// MarkFailed records that fulfilment failed for good; a refund follows.
func (s *Store) MarkFailed(ctx context.Context, id, reason string) error {
	_, err := s.exec(ctx, "failing order "+id,
		`UPDATE orders SET status = ?, error = ? WHERE id = ? AND status IN (?, ?)`,
		Failed, reason, id, Paid, Processing)
	return err
}

// MarkRefunded records the refund and erases what the visitor gave us.
func (s *Store) MarkRefunded(ctx context.Context, id string) error {
	_, err := s.exec(ctx, "refunding order "+id,
		`UPDATE orders SET status = ?, params = '{}', email = '' WHERE id = ? AND status IN (?, ?, ?)`,
		Refunded, id, Paid, Processing, Failed)
	return err
}

// Expire marks an unpaid order whose checkout lapsed as expired and erases its data.
func (s *Store) Expire(ctx context.Context, id string) (bool, error) {
	return s.exec(ctx, "expiring order "+id,
		`UPDATE orders SET status = ?, params = '{}', email = '' WHERE id = ? AND status = ?`,
		Expired, id, AwaitingPayment)
}

// RecordEvent remembers a webhook event id; it reports false if it was seen before.
func (s *Store) RecordEvent(ctx context.Context, id, typ string, at time.Time) (bool, error) {
	return s.exec(ctx, "recording event "+id,
		`INSERT INTO webhook_events (id, type, received_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		id, typ, millis(at))
}

// ForgetEvent removes a recorded event so that a retried delivery is processed again
// (used when handling it failed).
func (s *Store) ForgetEvent(ctx context.Context, id string) error {
	_, err := s.exec(ctx, "forgetting event "+id, `DELETE FROM webhook_events WHERE id = ?`, id)
	return err
}

func (s *Store) list(ctx context.Context, where string, args ...any) ([]Order, error) {
	return queryAll(ctx, s.db, scanOrder, `SELECT `+orderColumns+` FROM orders WHERE `+where, args...)
}

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, db *sql.DB, scan func(interface{ Scan(...any) error }) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing: %w", err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("listing: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ExpiredResults lists delivered orders whose link has lapsed and whose file is still kept.
func (s *Store) ExpiredResults(ctx context.Context, now time.Time) ([]Order, error) {
	return s.list(ctx, `result_key != '' AND link_expires_at != 0 AND link_expires_at <= ?`, millis(now))
}

// StaleUnpaid lists unpaid orders created before the cutoff.
func (s *Store) StaleUnpaid(ctx context.Context, before time.Time) ([]Order, error) {
	return s.list(ctx, `status = ? AND created_at < ?`, AwaitingPayment, millis(before))
}

// DropResult forgets the stored file of a swept order; the link then answers 410.
func (s *Store) DropResult(ctx context.Context, id string) error {
	_, err := s.exec(ctx, "dropping result of order "+id,
		`UPDATE orders SET result_key = '', status = CASE WHEN status = ? THEN ? ELSE status END WHERE id = ?`,
		Done, Expired, id)
	return err
}

// DeleteEventsBefore prunes old webhook ids (Stripe retries for at most 3 days).
func (s *Store) DeleteEventsBefore(ctx context.Context, before time.Time) error {
	_, err := s.exec(ctx, "pruning webhook events", `DELETE FROM webhook_events WHERE received_at < ?`, millis(before))
	return err
}
