package credit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"parla/providers/sqldb"
)

// Ledger spends credit: it finds the key of a secret, holds a call's price before its
// work, settles it after, or gives it back when the work failed.
type Ledger struct {
	cfg  Config
	db   *sqldb.DB
	keys *keyRows
	log  *slog.Logger
}

// Authenticate returns the active key whose secret this is; ErrInvalidKey for any other
// (unknown, revoked, refunded, expired): every call reads the row, so a revoked key is
// refused at once on every node.
func (l *Ledger) Authenticate(ctx context.Context, secret string) (Key, error) {
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) > 200 {
		return Key{}, ErrInvalidKey
	}
	k, err := l.keys.one(ctx, "key_hash", hashSecret(secret))
	if errors.Is(err, ErrNotFound) {
		return Key{}, ErrInvalidKey
	}
	if err != nil {
		return Key{}, err
	}
	if k.Status != StatusActive || !l.cfg.Now().Before(k.ExpiresAt) {
		return Key{}, fmt.Errorf("%w: the key is %s", ErrInvalidKey, k.state(l.cfg.Now()))
	}
	return k, nil
}

// state is a key's status, "expired" once its credit lapsed.
func (k Key) state(now time.Time) string {
	if k.Status == StatusActive && !now.Before(k.ExpiresAt) {
		return "expired"
	}
	return k.Status
}

// Call is one API call's charge.
type Call struct {
	Model  string
	Units  int64 // characters, or milliseconds of audio
	Amount int64 // thousandths of a cent
	// Idem is the request's Idempotency-Key ("" for none), Fingerprint what the request
	// asked for: the same key with another request is refused.
	Idem, Fingerprint string
}

// Hold is a call's price taken from the balance until Settle or Release.
type Hold struct {
	ID     string
	Amount int64
	// Repeat marks a call whose Idempotency-Key was settled before: it is done again
	// and charged nothing.
	Repeat bool
	// Holder is the process that took it (Config.Holder); Gen counts the takes of its row
	// (a released call retaken by its retry is the next one). Settle and Release change the
	// call only while this take holds it.
	Holder string
	Gen    int64
}

// Call states.
const (
	held     = "held"
	settled  = "settled"
	released = "released"
)

// Hold takes a call's price from the key's balance onto its held total, or fails with
// ErrInsufficient and takes nothing. One conditional update takes it (balance >= price),
// so concurrent calls never take the balance below zero.
func (l *Ledger) Hold(ctx context.Context, keyID string, c Call) (Hold, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return Hold{}, fmt.Errorf("holding a call's price: %w", err)
	}
	defer tx.Rollback()
	h := Hold{ID: newID(), Amount: c.Amount}
	again := false
	if c.Idem != "" {
		prev, found, err := earlierCall(ctx, tx, keyID, c.Idem)
		if err != nil {
			return Hold{}, err
		}
		if found {
			if h, err = prev.retry(c); err != nil {
				return Hold{}, err
			}
			if h.Repeat {
				if err := repeatOnce(ctx, tx, h.ID, l.cfg.Now()); err != nil {
					return Hold{}, err
				}
				if err := tx.Commit(); err != nil {
					return Hold{}, fmt.Errorf("counting a repeated call: %w", err)
				}
				return h, nil
			}
			again = true
		}
	}
	h.Holder = l.cfg.Holder
	now := millis(l.cfg.Now())
	res, err := tx.ExecContext(ctx, `UPDATE credit_keys SET balance = balance - ?, held = held + ?
		WHERE id = ? AND status = 'active' AND expires_at > ? AND balance >= ?`, c.Amount, c.Amount, keyID, now, c.Amount)
	if err != nil {
		return Hold{}, fmt.Errorf("holding a call's price: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return Hold{}, errors.Join(ErrInsufficient, err)
	}
	if again {
		h.Gen, err = retake(ctx, tx, h, c, now)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO credit_calls (id, key_id, idem, fingerprint, model, units, amount, state, created_at, holder)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'held', ?, ?)`, h.ID, keyID, nullable(c.Idem), c.Fingerprint, c.Model, c.Units, c.Amount, now, h.Holder)
	}
	if err == nil {
		err = tx.Commit()
	}
	tx.Rollback() // before idemTaken: SQLite has one connection
	if errors.Is(err, ErrInFlight) || err != nil && !again && c.Idem != "" && l.idemTaken(ctx, keyID, c.Idem) {
		return Hold{}, ErrInFlight // the same key's first insert won the race
	}
	if err != nil {
		return Hold{}, fmt.Errorf("holding a call's price: %w", err)
	}
	return h, nil
}

// priorCall is an earlier call under the same Idempotency-Key.
type priorCall struct {
	id, state, fingerprint string
	amount, gen            int64
}

// retry decides what a call under an Idempotency-Key used before does: a settled one is
// done again free (Repeat), a held one is running (ErrInFlight), a released one (its
// work failed) is held again under the same row.
func (p priorCall) retry(c Call) (Hold, error) {
	switch {
	case p.fingerprint != c.Fingerprint:
		return Hold{}, ErrIdempotencyMismatch
	case p.state == settled:
		return Hold{ID: p.id, Amount: 0, Repeat: true, Gen: p.gen}, nil
	case p.state == held:
		return Hold{}, ErrInFlight
	}
	return Hold{ID: p.id, Amount: c.Amount}, nil
}

// repeatOnce counts a settled call's free repeat, refused past MaxRepeats or RepeatWindow
// (ErrIdempotencySpent); one conditional update, so concurrent retries cannot pass the count.
// A repeat whose work failed gives its count back (Release): only answers given count.
func repeatOnce(ctx context.Context, tx *sqldb.Tx, id string, now time.Time) error {
	res, err := tx.ExecContext(ctx, `UPDATE credit_calls SET repeats = repeats + 1
		WHERE id = ? AND state = 'settled' AND repeats < ? AND settled_at > ?`, id, MaxRepeats, millis(now.Add(-RepeatWindow)))
	if err != nil {
		return fmt.Errorf("counting a repeated call: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errors.Join(ErrIdempotencySpent, err)
	}
	return nil
}

// retake holds a released call's row again for h's holder, as its next take (the
// generation it returns); a concurrent retry that took it first makes this one ErrInFlight.
func retake(ctx context.Context, tx *sqldb.Tx, h Hold, c Call, now int64) (int64, error) {
	var gen int64
	err := tx.QueryRowContext(ctx, `UPDATE credit_calls SET state = 'held', holder = ?, gen = gen + 1, model = ?,
		units = ?, amount = ?, created_at = ?, settled_at = 0 WHERE id = ? AND state = 'released' RETURNING gen`,
		h.Holder, c.Model, c.Units, c.Amount, now, h.ID).Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrInFlight
	}
	return gen, err
}

func earlierCall(ctx context.Context, tx *sqldb.Tx, keyID, idem string) (priorCall, bool, error) {
	var p priorCall
	err := tx.QueryRowContext(ctx, `SELECT id, state, fingerprint, amount, gen FROM credit_calls WHERE key_id = ? AND idem = ?`,
		keyID, idem).Scan(&p.id, &p.state, &p.fingerprint, &p.amount, &p.gen)
	if errors.Is(err, sql.ErrNoRows) {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("reading an earlier call: %w", err)
	}
	return p, true, nil
}

func (l *Ledger) idemTaken(ctx context.Context, keyID, idem string) bool {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM credit_calls WHERE key_id = ? AND idem = ?`, keyID, idem).Scan(&n)
	return err == nil && n > 0
}

// CallRecord is one call as its key's holder may see it: sizes, prices and times, never
// texts or audio.
type CallRecord struct {
	Model     string
	Units     int64
	Amount    int64 // thousandths of a cent
	State     string
	CreatedAt time.Time
}

// Recent lists a key's last calls, newest first.
func (l *Ledger) Recent(ctx context.Context, keyID string, limit int) ([]CallRecord, error) {
	return sqldb.QueryAll(ctx, l.db, func(s sqldb.Scanner) (CallRecord, error) {
		var c CallRecord
		var at int64
		err := s.Scan(&c.Model, &c.Units, &c.Amount, &c.State, &at)
		c.CreatedAt = fromMillis(at)
		return c, err
	}, `SELECT model, units, amount, state, created_at FROM credit_calls WHERE key_id = ?
		ORDER BY created_at DESC, id LIMIT ?`, keyID, limit)
}

// Key re-reads a key (its balance now).
func (l *Ledger) Key(ctx context.Context, id string) (Key, error) { return l.keys.byID(ctx, id) }

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
