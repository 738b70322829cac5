package credit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"parla/providers"
	"parla/providers/sqldb"
)

// Keyring is the operator's side of the keys (the admin area): list them (masked, with
// balance and calls), revoke one, refund an unused one.
type Keyring struct {
	cfg      Config
	keys     *keyRows
	payments providers.Payments
	log      *slog.Logger
}

// List returns the latest keys, paid or not, newest first.
func (r *Keyring) List(ctx context.Context, limit int) ([]Key, error) {
	return sqldb.QueryAll(ctx, r.keys.db, scanKey, `SELECT `+keyColumns+` FROM credit_keys ORDER BY created_at DESC, id LIMIT ?`, limit)
}

// ErrRefused: the operator's action does not apply to the key as it is now.
var ErrRefused = errors.New("refused")

// Revoke ends an active key at once: every node reads the row on every call.
func (r *Keyring) Revoke(ctx context.Context, id string) error {
	ok, err := r.keys.db.Changed(ctx, "revoking a key", `UPDATE credit_keys SET status = 'revoked', revoked_at = ?
		WHERE id = ? AND status = 'active'`, millis(r.cfg.Now()), id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: only an active key can be revoked", ErrRefused)
	}
	if err == nil {
		r.log.Info("API key revoked by the operator", "credit", id)
	}
	return err
}

// Refund gives the key's unused balance back through the payment provider (whole cents;
// a fraction of a cent stays on the ended key) and ends the key; refused while a call
// holds part of it. The balance is taken first, in one statement on the key's row that a
// concurrent call's hold cannot pass (the row's held total, not a read of the calls, which
// under READ COMMITTED can miss a hold committed while it waited), so what is refunded is
// never spent too. A provider that refunds whole
// payments only (no providers.PartRefunder) refunds a key none of whose credit was spent.
func (r *Keyring) Refund(ctx context.Context, id string) error {
	k, err := r.keys.byID(ctx, id)
	if err != nil {
		return err
	}
	var cents int64
	err = r.keys.db.QueryRowContext(ctx, `UPDATE credit_keys SET status = 'refunded',
		refunded = balance / 1000, balance = balance % 1000
		WHERE id = ? AND status IN ('active', 'revoked') AND balance >= 1000 AND held = 0
		RETURNING refunded`, id).Scan(&cents)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: only an active or revoked key with a cent or more unused and no call running can be refunded", ErrRefused)
	}
	if err != nil {
		return fmt.Errorf("taking the unused balance of key %s: %w", id, err)
	}
	if err := r.refund(ctx, k, cents); err != nil {
		if !errors.Is(err, ErrRefused) && !errors.Is(err, providers.ErrNotRefunded) {
			// The refund's fate is unknown (no answer): the money may be back, so the key
			// stays ended rather than spendable; the operator checks the provider.
			r.log.Error("API key refund of unknown fate: the key stays refunded; check the payment provider",
				"credit", id, "cents", cents, "err", err)
			return fmt.Errorf("the refund's fate is unknown, the key stays refunded (check the payment provider): %w", err)
		}
		// Certainly not refunded: the key is given back as it was, for the operator to try
		// again.
		if err2 := r.keys.db.Update(ctx, "restoring a key after a failed refund", `UPDATE credit_keys SET status = ?,
			balance = balance + refunded * 1000, refunded = 0 WHERE id = ? AND status = 'refunded'`, k.Status, id); err2 != nil {
			r.log.Error("restoring a key after a failed refund", "credit", id, "err", err2)
		}
		return err
	}
	r.log.Info("API key refunded by the operator", "credit", id, "cents", cents, "paid", k.Amount)
	return nil
}

// refund returns cents of the key's payment: all of it when nothing was spent, else that
// part, where the provider refunds parts.
func (r *Keyring) refund(ctx context.Context, k Key, cents int64) error {
	if cents == k.Amount {
		return r.payments.Refund(ctx, k.PaymentIntent, "credit-refund-"+k.ID)
	}
	if p, ok := r.payments.(providers.PartRefunder); ok {
		return p.RefundPart(ctx, k.PaymentIntent, cents, "credit-refund-"+k.ID)
	}
	return fmt.Errorf("%w: this payment provider refunds whole payments only and part of the key's credit was spent; revoke it instead", ErrRefused)
}
