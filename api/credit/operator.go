package credit

import (
	"context"
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

// Refund gives the payment back through the provider and ends the key, when none of its
// credit was spent or is held: the payment interface refunds whole payments only, so a
// partly spent key is refused (revoke it instead). The balance is taken first, in one
// statement that a concurrent call's hold cannot pass, so the refund is never spent too.
func (r *Keyring) Refund(ctx context.Context, id string) error {
	k, err := r.keys.byID(ctx, id)
	if err != nil {
		return err
	}
	ok, err := r.keys.db.Changed(ctx, "taking an unused key's balance", `UPDATE credit_keys SET status = 'refunded',
		balance = 0, refunded = amount WHERE id = ? AND status IN ('active', 'revoked') AND balance = amount * 1000
		AND NOT EXISTS (SELECT 1 FROM credit_calls WHERE key_id = credit_keys.id AND state = 'held')`, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: only a key none of whose credit was spent can be refunded (whole payments only); revoke it instead", ErrRefused)
	}
	if err := r.payments.Refund(ctx, k.PaymentIntent, "credit-refund-"+id); err != nil {
		// Not refunded: the key is given back as it was, for the operator to try again
		// (the provider's idempotency key makes a second refund the same one).
		if err2 := r.keys.db.Update(ctx, "restoring a key after a failed refund", `UPDATE credit_keys SET status = ?,
			balance = amount * 1000, refunded = 0 WHERE id = ? AND status = 'refunded'`, k.Status, id); err2 != nil {
			r.log.Error("restoring a key after a failed refund", "credit", id, "err", err2)
		}
		return err
	}
	r.log.Info("API key refunded by the operator", "credit", id, "cents", k.Amount)
	return nil
}
