package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"parla/api/orders/jobs"
)

// The reconciler: every state an order rests in has an exit, taken by rule within a bound
// by whichever node is alive, not by the path that happened to leave it there. Every
// ReconcileInterval one live node runs its steps in order; each finds the rows past their
// bound and takes their exit through the same fenced writes as a run (a claim first), logs
// each with its order and counts it (EventReconciled, parla_reconciled_total{step}):
//
//   - lost: a processing order whose newest fulfilment job River gave up on (discarded,
//     cancelled) is given up and refunded (jobs.Queue.LostFulfilments): its runs failed;
//   - unqueued: a paid order, paid more than a ReconcileInterval ago, with no unfinished
//     fulfilment job (its node died between the payment and the insert, its row was lost,
//     or its job ended before any run claimed it), or a processing one whose job row was
//     lost, is queued again under a new job key (jobs.Queue.Unrun); the new run's claim
//     fences off any run still going;
//   - unrefunded: a failed order with no unfinished refund job (its insert failed, or the
//     job used up its attempts) gets one, unless its refund went to the payment provider
//     with its fate unknown (refund_sent_at): that one is the operator's (FilterStuck);
//   - letters: an ended order's letter that certainly did not leave (refused for now) is
//     sent again, claim first (resendLetters, letter.go); one in doubt or refused for good
//     is the operator's (FilterUnmailed).
//
// The app appends its own steps (Config.Reconcilers), such as the API credit's holds of
// dead processes.

// Reconciler is one step of the reconciler: Run takes the exit of every row past its
// bound and says how many it moved. Name labels its count in the metrics.
type Reconciler struct {
	Name string
	Run  func(ctx context.Context) (int, error)
}

// EventReconciled: the reconciler moved one row (Reason: the step's name).
const EventReconciled EventKind = "reconciled"

// reconciler runs the steps, the book's own first.
type reconciler struct {
	cfg       Config
	queue     *jobs.Queue
	fulfiller *fulfiller
	observer  Observer
	log       *slog.Logger
}

// steps are the book's steps, then the app's.
func (r *reconciler) steps() []Reconciler {
	return append([]Reconciler{
		{"lost", r.giveUpLost},
		{"unqueued", r.requeueUnqueued},
		{"unrefunded", r.refundUnrefunded},
		{"letters", r.fulfiller.resendLetters},
	}, r.cfg.Reconcilers...)
}

// reconcile runs every step once, each whatever the others did, and says what each moved.
func (r *reconciler) reconcile(ctx context.Context) (map[string]int, error) {
	moved := map[string]int{}
	var errs []error
	for _, s := range r.steps() {
		n, err := s.Run(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("reconciling (%s): %w", s.Name, err))
		}
		moved[s.Name] += n
		for range n {
			r.observer.Observe(Event{Kind: EventReconciled, Reason: s.Name})
		}
	}
	return moved, errors.Join(errs...)
}

// errJobLost is why an order whose job River gave up on failed.
var errJobLost = errors.New("its fulfilment job was given up by the queue (discarded or cancelled) without a result")

// giveUpLost fails and refunds the orders whose jobs were lost; it reports how many.
func (r *reconciler) giveUpLost(ctx context.Context) (int, error) {
	ids, err := r.queue.LostFulfilments(ctx, string(Processing))
	if err != nil {
		return 0, fmt.Errorf("finding orders whose job was lost: %w", err)
	}
	return r.each(ids, "a paid order's job was given up by the queue; refunding", func(id string) error {
		// Claim 0: giveUp takes the order first, fencing off a runner judged dead that resumes.
		return r.fulfiller.giveUp(ctx, id, 0, errJobLost)
	})
}

// requeueUnqueued queues again the paid and processing orders that no job will run.
func (r *reconciler) requeueUnqueued(ctx context.Context) (int, error) {
	ids, err := r.queue.Unrun(ctx, string(Paid), string(Processing), millis(r.cfg.Now().Add(-r.cfg.ReconcileInterval)))
	if err != nil {
		return 0, fmt.Errorf("finding paid orders without a job: %w", err)
	}
	return r.each(ids, "a paid order had no job to run it; queued again", func(id string) error {
		_, err := r.queue.Requeue(ctx, id)
		return err
	})
}

// refundUnrefunded queues the refund of the failed orders that have no refund job.
func (r *reconciler) refundUnrefunded(ctx context.Context) (int, error) {
	ids, err := r.queue.Jobless(ctx, "refund", `o.status = ? AND o.refund_sent_at = 0`, Failed)
	if err != nil {
		return 0, fmt.Errorf("finding failed orders without a refund job: %w", err)
	}
	return r.each(ids, "a failed order had no refund job; queued", func(id string) error {
		return r.queue.Refund(ctx, id)
	})
}

// each takes the exit of every order of ids, logging each with msg; it counts those that
// moved (a claim lost to another runner moved nothing here).
func (r *reconciler) each(ids []string, msg string, exit func(id string) error) (int, error) {
	n := 0
	var errs []error
	for _, id := range ids {
		err := exit(id)
		switch {
		case errors.Is(err, ErrClaimLost):
		case err != nil:
			errs = append(errs, err)
		default:
			r.log.Warn("reconciler: "+msg, "order", id)
			n++
		}
	}
	return n, errors.Join(errs...)
}
