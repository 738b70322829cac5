package orders

import (
	"context"
	"fmt"
)

// The version of a delivered transcript's text, recorded on its order's row: 0 as
// delivered, one more at every save or revert of the visitor's edit. Rendered downloads
// are cached under it (api/render_cache.go), so a node never serves a render of a text
// that was saved over or reverted, on this node or another.

// EditVersion reads the version of order id's transcript text.
func (r *Results) EditVersion(ctx context.Context, id string) (int64, error) {
	var v int64
	if err := r.orders.db.QueryRowContext(ctx, `SELECT edit_version FROM orders WHERE id = ?`, id).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the edit version of order %s: %w", id, err)
	}
	return v, nil
}

// bumpEditVersion records that order id's transcript text changed.
func (r *Results) bumpEditVersion(ctx context.Context, id string) error {
	_, err := r.orders.db.ExecContext(ctx, `UPDATE orders SET edit_version = edit_version + 1 WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("recording the edit of order %s: %w", id, err)
	}
	return nil
}
