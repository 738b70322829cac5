package orders

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"parla/providers"
)

// putEdit stores the visitor's edit, ordered against "delete now" and the expiry, which
// mark the order before they remove its files (markErased, then eraseFiles): the save is
// recorded on the row only while the result is still served, in one statement, and the
// file written after it is checked against the mark again. A delete whose mark came
// before that check removes the file itself (it lists the order's objects after marking);
// one whose mark came after finds the check failing here, and the save removes its file.
// Either way no edit outlives the deletion.
func (r *Results) putEdit(ctx context.Context, o Order, raw []byte) error {
	ok, err := r.orders.recordEdit(ctx, o.ID, o.ResultKey)
	if err != nil {
		return err
	}
	if !ok {
		return ErrLinkExpired
	}
	key := editedKey(o.ResultKey)
	if err := r.storage.Put(ctx, key, bytes.NewReader(raw), int64(len(raw)), "application/json"); err != nil {
		return fmt.Errorf("storing the edit of order %s: %w", o.ID, err)
	}
	serves, err := r.orders.stillServes(context.WithoutCancel(ctx), o.ID, o.ResultKey)
	if err == nil && serves {
		return nil
	}
	if derr := r.storage.Delete(context.WithoutCancel(ctx), key); derr != nil && !errors.Is(derr, providers.ErrNotFound) {
		err = errors.Join(err, derr)
	}
	if err != nil {
		return fmt.Errorf("checking the edit of order %s against its deletion: %w", o.ID, err)
	}
	return ErrLinkExpired
}
