package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// QueuePosition tells a paid order still waiting for a worker its place in the queue: 1
// when it is next, 0 when it is not waiting (being produced, done, or not paid). Two
// small queries on River's table: the order's own waiting fulfilment job, then the
// fulfilment jobs available before it.
func (b *Book) QueuePosition(ctx context.Context, o Order) (int, error) {
	if o.Status != Paid || b.queue == nil || b.queue.db == nil {
		return 0, nil
	}
	var id int64
	err := b.queue.db.QueryRowContext(ctx,
		`SELECT id FROM river_job
		  WHERE kind = 'fulfil' AND state IN ('available', 'scheduled', 'retryable')
		    AND `+b.queue.db.Dialect.JSONText("args", "order_id")+` = ?
		  ORDER BY id DESC LIMIT 1`, o.ID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("finding the job of order %s: %w", o.ID, err)
	}
	var ahead int
	err = b.queue.db.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM river_job WHERE kind = 'fulfil' AND state = 'available' AND id < ?`, id).Scan(&ahead)
	if err != nil {
		return 0, fmt.Errorf("counting the jobs before order %s: %w", o.ID, err)
	}
	return ahead + 1, nil
}
