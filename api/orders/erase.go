package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path"
	"strings"

	"parla/providers"
	"parla/providers/sqldb"
)

// Erasure. A deletion sticks: "Delete now", the expiry and a refund mark the row (erased,
// or a final status) before removing files, and every later write checks the mark. The
// orphan sweep removes what no order serves.

// erasure removes orders' files for good.
type erasure struct {
	db      *sqldb.DB
	storage providers.Storage
}

// mark marks an order's result erased for good before its files go (no later write, a
// save or a resumed runner's result, can bring it back), and ends the order as expired: a
// delivered one, and one whose result is stored while its run still sends the letter or
// finishes (no run takes an erased order, so a run that died would leave it processing
// for ever; a run that resumes finds its finish refused). Such an order's address goes too:
// a delivery letter that never left has nothing left to deliver (a failed order keeps it
// for its refund's news). One statement, so no crash leaves the mark without the end.
func (e *erasure) mark(ctx context.Context, id string) error {
	return e.db.Update(ctx, "erasing result of order "+id,
		`UPDATE orders SET erased = 1, result_key = '',
		   status = CASE WHEN status = ? OR status = ? AND result_key != '' THEN ? ELSE status END,
		   email = CASE WHEN status = ? OR status = ? AND result_key != '' THEN '' ELSE email END
		 WHERE id = ?`, Done, Processing, Expired, Done, Processing, id)
}

// storedOrder is what the orphan sweep needs of an order.
type storedOrder struct {
	status    Status
	resultKey string
	claim     int64
	erased    bool
}

// stored reads what the orphan sweep needs of an order; found is false when it is gone.
func (e *erasure) stored(ctx context.Context, id string) (o storedOrder, found bool, err error) {
	var erased int64
	err = e.db.QueryRowContext(ctx, `SELECT status, result_key, claim, erased FROM orders WHERE id = ?`, id).
		Scan(&o.status, &o.resultKey, &o.claim, &erased)
	if errors.Is(err, sql.ErrNoRows) {
		return o, false, nil
	}
	if err != nil {
		return o, false, fmt.Errorf("loading order %s: %w", id, err)
	}
	o.erased = erased != 0
	return o, true, nil
}

// deletePrefix removes every object under prefix; with a storage that cannot list, the
// keys named in known. Missing objects are no error.
func deletePrefix(ctx context.Context, s providers.Storage, prefix string, known ...string) error {
	keys := known
	if l, ok := s.(providers.KeyLister); ok {
		listed, err := l.Keys(ctx, prefix)
		if err != nil {
			return err
		}
		keys = append(keys, listed...)
	}
	var errs []error
	for _, key := range keys {
		if err := s.Delete(ctx, key); err != nil && !errors.Is(err, providers.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// erase marks the order erased, then removes every object of it: its result, what is
// kept with it, the visitor's edit, and whatever a runner of any claim stored. The mark
// first: a save or a runner's result that comes later checks it and removes what it wrote.
func (e *erasure) erase(ctx context.Context, id, resultKey string) error {
	if err := e.mark(ctx, id); err != nil {
		return err
	}
	var err error
	if resultKey != "" {
		err = deleteResult(ctx, e.storage, resultKey)
	}
	if err = errors.Join(err, deletePrefix(ctx, e.storage, "results/"+id+"/")); err != nil {
		return fmt.Errorf("erasing the files of order %s: %w", id, err)
	}
	return nil
}

// discard removes the objects claim stored for the order: never another claim's (a run
// that lost its order cleans up after itself).
func (e *erasure) discard(ctx context.Context, id string, claim int64) error {
	return deletePrefix(ctx, e.storage, claimPrefix(id, claim))
}

// orphans removes the objects under results/ that no order serves: those of an order that
// is gone, erased, expired, failed or refunded, and those a claim that lost its order left
// (a directory that is neither the order's result's nor its current claim's).
func (e *erasure) orphans(ctx context.Context) (int, error) {
	l, ok := e.storage.(providers.KeyLister)
	if !ok {
		return 0, nil
	}
	keys, err := l.Keys(ctx, "results/")
	if err != nil {
		return 0, err
	}
	cache := map[string]*storedOrder{}
	var errs []error
	n := 0
	for _, key := range keys {
		rest := strings.TrimPrefix(key, "results/")
		id, _, ok := strings.Cut(rest, "/")
		if !ok || id == "" {
			continue
		}
		o, seen := cache[id]
		if !seen {
			so, found, err := e.stored(ctx, id)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if found {
				o = &so
			}
			cache[id] = o
		}
		if !orphan(o, id, key) {
			continue
		}
		if err := e.storage.Delete(ctx, key); err != nil && !errors.Is(err, providers.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// orphan tells whether the object at key, under the order id (nil: gone), is served by
// no one and written by no live claim.
func orphan(o *storedOrder, id, key string) bool {
	if o == nil || o.erased {
		return true
	}
	// The result the order serves stays, whatever its status: a delivered order refunded
	// by the operator keeps its file until its link lapses.
	dir := path.Dir(key) + "/"
	if o.resultKey != "" && dir == path.Dir(o.resultKey)+"/" {
		return false
	}
	switch o.status {
	case Expired, Failed, Refunded, AwaitingPayment:
		return true
	}
	if dir == "results/"+id+"/" {
		return false // a result stored before claims, still being made or served
	}
	return dir != claimPrefix(id, o.claim)
}
