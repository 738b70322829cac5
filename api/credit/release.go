package credit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"parla/providers/sqldb"
)

// Settle makes a held price the call's charge. A repeat settles nothing; a hold given back
// meanwhile (its take released, perhaps retaken by a retry) is an error and charges nothing.
func (l *Ledger) Settle(ctx context.Context, h Hold) error {
	if h.Repeat {
		return nil
	}
	ok, err := l.end(ctx, h, settled)
	if err == nil && !ok {
		err = errors.New("its hold was given back")
	}
	if err != nil {
		return fmt.Errorf("settling call %s: %w", h.ID, err)
	}
	return nil
}

// Release gives a held price back: the call's work failed. Releasing twice, a settled call,
// or a take that was released and retaken since changes nothing; a free repeat's release
// gives its repeat back (repeatOnce).
//
// The price goes back to the balance whatever the key's status, and a release never makes
// an ended key's credit spendable: nothing spends the balance of a key that is not active
// (a hold needs an active key). A revoked key's balance is what its refund returns. The
// operator's refund needs held = 0 on the row, so it leaves no hold to release; a key whose
// payment was refunded at the provider (Shop.endPaid) may have one, and its released price
// stays on the ended key, which the operator's Refund no longer takes.
func (l *Ledger) Release(ctx context.Context, h Hold) error {
	if h.Repeat {
		// No row changed: this repeat's count was given back already, nothing to do.
		return l.db.Update(ctx, "giving back a failed repeat of call "+h.ID, `UPDATE credit_calls SET repeats = repeats - 1
			WHERE id = ? AND state = 'settled' AND repeats > 0`, h.ID)
	}
	if _, err := l.end(ctx, h, released); err != nil {
		return fmt.Errorf("releasing call %s: %w", h.ID, err)
	}
	return nil
}

// end moves a call out of held, in one conditional update naming its take (id and gen),
// and only when that changed the row moves the price on the key's row, in the same
// transaction: settled, out of held (the call counted); released, back to the balance.
// A call this take no longer holds changes nothing (false).
func (l *Ledger) end(ctx context.Context, h Hold, to string) (bool, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var keyID string
	var amount int64
	at := int64(0)
	if to == settled {
		at = millis(l.cfg.Now())
	}
	err = tx.QueryRowContext(ctx, `UPDATE credit_calls SET state = ?, settled_at = ?
		WHERE id = ? AND gen = ? AND state = 'held' RETURNING key_id, amount`, to, at, h.ID, h.Gen).Scan(&keyID, &amount)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	back, calls := keyMove(to, amount)
	res, err := tx.ExecContext(ctx, `UPDATE credit_keys SET held = held - ?, balance = balance + ?, calls = calls + ?
		WHERE id = ?`, amount, back, calls, keyID)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, errors.Join(fmt.Errorf("the key %s of the call is missing", keyID), err)
	}
	return true, tx.Commit()
}

// keyMove is what ending a hold of amount does to its key besides taking it out of held:
// settled, it is spent and the call counted; released, it goes back to the balance.
func keyMove(to string, amount int64) (back, calls int64) {
	if to == settled {
		return 0, 1
	}
	return amount, 0
}

// heldCall is a held call as the reconciler sees it.
type heldCall struct {
	Hold
	keyID   string
	created int64
}

// ReleaseDead gives back every hold whose process is not among live (it died mid-call),
// and any hold older than StaleHold whoever holds it (a backstop), each through the same
// fenced release as a failed call's, so that a concurrent settle or release, or another
// node's reconciler, makes it change nothing. It logs each one and returns how many it
// gave back. The reconciler calls it with the live process identities.
func (l *Ledger) ReleaseDead(ctx context.Context, live []string) (int, error) {
	calls, err := sqldb.QueryAll(ctx, l.db, func(s sqldb.Scanner) (heldCall, error) {
		var c heldCall
		return c, s.Scan(&c.ID, &c.Gen, &c.keyID, &c.Amount, &c.Holder, &c.created)
	}, `SELECT id, gen, key_id, amount, holder, created_at FROM credit_calls WHERE state = 'held'`)
	if err != nil {
		return 0, fmt.Errorf("reading the held calls: %w", err)
	}
	before := millis(l.cfg.Now().Add(-l.cfg.StaleHold))
	n := 0
	for _, c := range calls {
		if !orphaned(c.Holder, c.created, live, before) {
			continue
		}
		ok, err := l.end(ctx, c.Hold, released)
		if err != nil {
			return n, fmt.Errorf("releasing the orphaned call %s: %w", c.ID, err)
		}
		if ok {
			n++
			l.log.Warn("API call's hold given back: its process is gone or it outlived the stale-hold bound",
				"call", c.ID, "credit", c.keyID, "amount", c.Amount, "holder", c.Holder)
		}
	}
	return n, nil
}

// orphaned: a hold whose process is gone (its holder not among live), or one taken before
// before (unix ms) whoever holds it. A hold with no holder (taken before holders were
// recorded, or by a ledger with no Config.Holder) is left to the backstop alone: its
// process cannot be told dead.
func orphaned(holder string, created int64, live []string, before int64) bool {
	return created < before || holder != "" && !slices.Contains(live, holder)
}
