package orders

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"
)

// The runner's side of the fence (claim.go): what a run does when it finds it lost its
// order, and the letter sent at most once.

// lostOr returns err, or ErrClaimLost (and removes what this run stored) when the run
// failed because it no longer holds its order: its lease lapsed (the gate stopped an
// engine process) or another runner took the order.
func (f *fulfiller) lostOr(ctx context.Context, id string, claim int64, err error) error {
	held, herr := f.jobs.holds(context.WithoutCancel(ctx), id, claim)
	if herr != nil || held {
		return err
	}
	f.discard(ctx, id, claim)
	return fmt.Errorf("%w (%v)", ErrClaimLost, err)
}

// ended is nil when the order was refunded or erased meanwhile (the job is over: the
// visitor is told that, not sent a link too), else lost, which ends the job without a
// retry (another runner holds the order).
func (f *fulfiller) ended(ctx context.Context, id string, lost error) error {
	o, err := f.orders.Get(ctx, id)
	if err == nil && o.Status != Processing && o.Status != Paid && o.Status != Done {
		f.log.Warn("order changed while it was produced; not delivering", "order", id, "status", o.Status)
		return nil
	}
	return lost
}

// discard removes the objects this claim stored: never another claim's.
func (f *fulfiller) discard(ctx context.Context, id string, claim int64) {
	if err := deletePrefix(context.WithoutCancel(ctx), f.storage, claimPrefix(id, claim)); err != nil {
		f.log.Warn("removing what a run that lost its order stored", "order", id, "claim", claim, "err", err)
	}
}

// mailOnce sends the order's letter (its link when delivered, else the news of its
// refund) at most once: the send is claimed in the database first, by the holder of claim
// (claim < 0: the refund). A claim taken before means it was sent, or a crash came between
// the claim and the send: it is not sent again (the operator's Resend is the remedy). A
// send that fails gives the claim back for the retry.
func (f *fulfiller) mailOnce(ctx context.Context, o Order, claim int64, delivered bool) error {
	if o.Email == "" {
		return nil
	}
	ok, err := f.jobs.claimLetter(ctx, o.ID, claim, f.cfg.Now())
	if err != nil {
		return err
	}
	if !ok {
		if claim >= 0 {
			if held, err := f.jobs.holds(ctx, o.ID, claim); err == nil && !held {
				return fmt.Errorf("mailing order %s: %w", o.ID, ErrClaimLost)
			}
		}
		f.log.Warn("the letter was claimed before; not sent again", "order", o.ID)
		return nil
	}
	if err := f.mail(ctx, o, delivered); err != nil {
		if uerr := f.jobs.unclaimLetter(context.WithoutCancel(ctx), o.ID); uerr != nil {
			err = errors.Join(err, uerr)
		}
		return err
	}
	return nil
}

// runFailed is a run's failure after it took its claim: giving the order up is fenced by
// that claim (giveUp), so a run that lost the order cannot fail or refund it.
type runFailed struct {
	claim int64
	err   error
}

func (e *runFailed) Error() string { return e.err.Error() }
func (e *runFailed) Unwrap() error { return e.err }

// withClaim marks err (nil stays nil) as a failure of the run that holds claim.
func withClaim(claim int64, err error) error {
	if err == nil {
		return nil
	}
	return &runFailed{claim, err}
}

// claimOf is the claim a run held when it failed with err; 0 when it took none.
func claimOf(err error) int64 {
	var rf *runFailed
	if errors.As(err, &rf) {
		return rf.claim
	}
	return 0
}

// giveUpRun gives the order up after the run that failed with err, fenced by the run's
// claim. A run that lost the order gives nothing up and ends its job without a retry.
func (w *fulfilWorker) giveUpRun(ctx context.Context, id string, err error) error {
	gerr := w.f.giveUp(context.WithoutCancel(ctx), id, claimOf(err), err)
	if errors.Is(gerr, ErrClaimLost) {
		w.f.log.Warn("not giving up: the order is no longer this runner's", "order", id, "err", gerr)
		return river.JobCancel(gerr)
	}
	return gerr
}
