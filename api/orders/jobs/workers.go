package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
)

// Handlers are what the order book does for each job; they know nothing of River. A
// handler's error decides the job's fate here, and only here:
//   - nil: the job is completed;
//   - an error wrapping ErrCancel: the job is cancelled, with no retry and nothing given
//     up (the order is another runner's, or was refunded or erased meanwhile);
//   - a fulfilment error that is Final, or any on the last attempt: GiveUp is called;
//   - any other error: River retries the job later.
type Handlers struct {
	// Fulfil produces and delivers a paid order. alive reports whether this node may still
	// start work for the run (its lease, lease.go): the handler checks it before every
	// engine process.
	Fulfil func(ctx context.Context, orderID string, alive func() error) error
	// GiveUp ends an order its fulfilment failed for good with cause (cause is what Fulfil
	// returned).
	GiveUp func(ctx context.Context, orderID string, cause error) error
	// Refund returns the money of an order given up and tells the visitor; lastAttempt is
	// true from the job's Config.MaxAttempts-th try on (its money is retried for longer,
	// RefundAttempts), when a letter that cannot be sent no longer holds the refund back.
	Refund func(ctx context.Context, orderID string, lastAttempt bool) error
	// Sweep removes what lapsed (the periodic job).
	Sweep func(ctx context.Context) error
	// Reconcile moves every row past its bound (the periodic reconciler, run by whichever
	// node is alive).
	Reconcile func(ctx context.Context) error
}

// ErrCancel, wrapped in a handler's error, cancels its job: no retry, nothing given up.
// A cancelled job may be queued again (an operator's retry, a late payment).
var ErrCancel = errors.New("the job is cancelled")

// Final is an error no retry can mend: the order is given up at once.
type Final interface {
	error
	Final() bool
}

// isFinal reports whether err is, or wraps, a Final error.
func isFinal(err error) bool {
	var f Final
	return errors.As(err, &f) && f.Final()
}

// workers are the queue's River workers, calling h.
func (q *Queue) workers(h Handlers) *river.Workers {
	workers := river.NewWorkers()
	river.AddWorker(workers, &fulfilWorker{q: q, h: h})
	river.AddWorker(workers, &refundWorker{h: h, letterTries: q.letterTries})
	river.AddWorker(workers, &sweepWorker{h: h})
	river.AddWorker(workers, &reconcileWorker{h: h})
	return workers
}

type fulfilWorker struct {
	river.WorkerDefaults[fulfilArgs]
	q *Queue
	h Handlers
}

// Work runs the order's fulfilment on a node whose lease holds: one whose heartbeats lag
// takes no new work, since another node may judge it dead; the job waits for a node that
// beats.
func (w *fulfilWorker) Work(ctx context.Context, job *river.Job[fulfilArgs]) error {
	if err := w.q.lease.check(); err != nil {
		return river.JobSnooze(time.Second)
	}
	epoch := w.q.lease.current()
	err := w.h.Fulfil(ctx, job.Args.OrderID, func() error { return w.q.lease.checkRun(epoch) })
	return w.outcome(ctx, job, err)
}

// outcome turns the fulfilment's error into the job's fate (Handlers).
func (w *fulfilWorker) outcome(ctx context.Context, job *river.Job[fulfilArgs], err error) error {
	log := w.q.log.With("order", job.Args.OrderID, "attempt", job.Attempt)
	switch {
	case err == nil:
		return nil
	case stoppedByShutdown(ctx):
		log.Warn("fulfilment stopped by a shutdown; it runs again, its attempt not used", "err", err)
		return river.JobSnooze(0)
	case errors.Is(err, ErrCancel):
		log.Warn("fulfilment ends: the order is no longer this runner's", "err", err)
		return river.JobCancel(err)
	case isFinal(err):
		log.Error("fulfilment cannot succeed, giving the order up", "err", err)
	case job.Attempt < job.MaxAttempts:
		log.Warn("fulfilment failed, will retry", "err", err)
		return err
	default:
		log.Error("fulfilment failed for good, giving the order up", "err", err)
	}
	gerr := w.h.GiveUp(context.WithoutCancel(ctx), job.Args.OrderID, err)
	if errors.Is(gerr, ErrCancel) {
		log.Warn("not giving up: the order is no longer this runner's", "err", gerr)
		return river.JobCancel(gerr)
	}
	return gerr
}

// stoppedByShutdown reports whether the job's context was cancelled by the client
// stopping: not timed out (JobTimeout), nor its job cancelled (an operator's refund). A
// job stopped so goes back to the queue with its attempt unused (River's snooze gives the
// attempt back), never to its last-attempt ending.
func stoppedByShutdown(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled) && !errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely)
}

type refundWorker struct {
	river.WorkerDefaults[refundArgs]
	h Handlers
	// letterTries is Config.MaxAttempts: the tries a refund's letter holds it back.
	letterTries int
}

func (w *refundWorker) Work(ctx context.Context, job *river.Job[refundArgs]) error {
	err := w.h.Refund(ctx, job.Args.OrderID, job.Attempt >= min(job.MaxAttempts, w.letterTries))
	if err != nil && stoppedByShutdown(ctx) {
		return river.JobSnooze(0)
	}
	return err
}

type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	h Handlers
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	return w.h.Sweep(ctx)
}

type reconcileWorker struct {
	river.WorkerDefaults[reconcileArgs]
	h Handlers
}

func (w *reconcileWorker) Work(ctx context.Context, _ *river.Job[reconcileArgs]) error {
	return w.h.Reconcile(ctx)
}
