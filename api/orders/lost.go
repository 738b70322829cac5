package orders

import (
	"context"
	"errors"
	"fmt"

	"parla/providers/sqldb"
)

// A paid order must end delivered or refunded. River gives up on a job in ways that
// never reach our worker's last-attempt refund: its rescuer discards a job found stuck on
// its last attempt (the node died each time), and an operator may cancel or discard one
// in River's UI. The sweep finds such orders and gives them up the usual way: failed, then
// the refund job and its letter.

// errJobLost is why such an order failed.
var errJobLost = errors.New("its fulfilment job was given up by the queue (discarded or cancelled) without a result")

// lostFulfilments lists the paid orders, not yet done, whose fulfilment jobs are all
// discarded or cancelled. The state filter comes first: River indexes jobs by state.
func (q *jobQueue) lostFulfilments(ctx context.Context) ([]string, error) {
	orderOf := q.db.Dialect.JSONText("j.args", "order_id")
	// In a cluster the one job of an order may have been cancelled by a runner that lost
	// the order (claim.go) while the winner, on a live node, still runs it: not lost.
	holderAlive, args := "", []any{Paid, Processing}
	if q.db.Dialect == sqldb.Postgres {
		_, deadAfter := q.nodes.timing()
		holderAlive = ` AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = o.claimed_by AND n.seen_at > ` + dbMillis + ` - ?)`
		args = append(args, deadAfter.Milliseconds())
	}
	return sqldb.QueryAll(ctx, q.db, func(row sqldb.Scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT o.id FROM orders o
		WHERE o.status IN (?, ?)
		  AND EXISTS (SELECT 1 FROM river_job j WHERE j.state IN ('discarded', 'cancelled')
		                AND j.kind = 'fulfil' AND `+orderOf+` = o.id)
		  AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.state IN ('available', 'scheduled', 'retryable', 'running', 'pending', 'completed')
		                AND j.kind = 'fulfil' AND `+orderOf+` = o.id)`+holderAlive, args...)
}

// giveUpLost fails and refunds the orders whose jobs were lost; it reports how many.
func (s *sweeper) giveUpLost(ctx context.Context) (int, error) {
	ids, err := s.queue.lostFulfilments(ctx)
	if err != nil {
		return 0, fmt.Errorf("finding orders whose job was lost: %w", err)
	}
	var errs []error
	for _, id := range ids {
		s.log.Error("a paid order's job was given up by the queue; refunding", "order", id)
		// Claim 0: giveUp takes the order first, fencing off a runner judged dead that resumes.
		if err := s.fulfiller.giveUp(ctx, id, 0, errJobLost); err != nil && !errors.Is(err, ErrClaimLost) {
			errs = append(errs, err)
		}
	}
	return len(ids), errors.Join(errs...)
}
