package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"parla/providers"
)

// The way out of a run that cannot deliver: the order given up (fenced by the run's
// claim), then refunded by its own job and the visitor told.

// giveUp ends an order that cannot be fulfilled, for the holder of claim (0: the caller
// holds none, as the sweep or a run that failed before claiming: it takes one first, which
// fences off any earlier runner). If the result exists and only the message failed, the
// visitor still has the link on the confirmation page, so the order is finished rather
// than refunded. A claim lost to another runner changes nothing: ErrClaimLost.
func (f *fulfiller) giveUp(ctx context.Context, id string, claim int64, cause error) error {
	if claim == 0 {
		var err error
		if claim, _, err = f.fence.claim(ctx, id); err != nil {
			return err
		}
	}
	o, err := f.orders.Get(ctx, id)
	if err != nil {
		return err
	}
	if o.ResultKey != "" {
		if ok, err := f.fence.finishUnmailedFenced(ctx, id, claim, f.cfg.Now()); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("giving up order %s: %w", id, ErrClaimLost)
		}
		f.release(ctx, o) // only now: a loser must not take the winner's input away
		f.observer.Observe(Event{Kind: EventDelivered, Service: o.Service})
		return nil
	}
	reason := "production_failed"
	var pe *permanentError
	if errors.As(cause, &pe) {
		reason = pe.reason
	}
	if ok, err := f.fence.failFenced(ctx, id, claim, reason); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("giving up order %s: %w", id, ErrClaimLost)
	}
	f.observer.Observe(Event{Kind: EventFailed, Service: o.Service, Reason: reason})
	if err := f.queue.Refund(ctx, id); err != nil {
		return fmt.Errorf("after %v: %w", cause, err)
	}
	return nil
}

// refund returns the money (idempotent per order at the provider), tells the visitor and
// erases what they gave us. On the last attempt a message that cannot be sent no longer
// holds the order back: the money is back either way.
func (f *fulfiller) refund(ctx context.Context, id string, lastAttempt bool) error {
	claim, err := f.fence.claimRefund(ctx, id)
	if errors.Is(err, ErrClaimLost) {
		// Refunded already, or retried by the operator (operator.go): being fulfilled again.
		f.log.Info("refund skipped: the order is no longer failed", "order", id)
		return nil
	}
	if err != nil {
		return err
	}
	return f.refundClaimed(ctx, id, claim, lastAttempt)
}

// refundClaimed is the refund of a failed order for the holder of the refund's claim.
func (f *fulfiller) refundClaimed(ctx context.Context, id string, claim int64, lastAttempt bool) error {
	o, err := f.orders.Get(ctx, id)
	if err != nil {
		return err
	}
	if o.PaymentIntent != "" {
		// The provider's call is the one write no claim fences: the claim is checked and
		// the sending recorded just before it, in one statement, which an operator's retry
		// (taking the order back) and this exclude each other by.
		if sending, err := f.fence.refundSending(ctx, id, claim, f.cfg.Now()); err != nil || !sending {
			return err
		}
		if err := f.payments.Refund(ctx, o.PaymentIntent, "refund-"+o.ID); err != nil {
			return fmt.Errorf("refunding order %s: %w", id, refundFailed(ctx, f.fence, f.log, id, claim, err))
		}
	}
	if o.MailedAt.IsZero() {
		if err := f.mailOnce(ctx, o, claim, false); err != nil {
			f.log.Warn("telling the visitor about the refund", "order", id, "err", err)
			if !lastAttempt {
				return err
			}
		}
	}
	f.release(ctx, o)
	if ok, err := f.fence.refundedFenced(ctx, id, claim); err != nil {
		return err
	} else if !ok {
		f.log.Warn("the refund's claim was taken meanwhile (an operator's retry); not recorded here", "order", id)
		return nil
	}
	f.observer.Observe(Event{Kind: EventRefunded, Service: o.Service, Reason: o.Error, Amount: o.Amount, Currency: o.Currency})
	f.log.Info("order refunded", "order", id)
	return nil
}

// refundFailed takes back the mark of a refund the provider certainly refused
// (providers.ErrNotRefunded), for the claim that made it; any other answer leaves the
// money's fate unknown, and the mark stays. It returns err, with the mark's error.
func refundFailed(ctx context.Context, fe *fence, log *slog.Logger, id string, claim int64, err error) error {
	if !errors.Is(err, providers.ErrNotRefunded) {
		return err
	}
	cleared, cerr := fe.refundRefused(ctx, id, claim)
	if cerr == nil && !cleared {
		log.Warn("the refund was refused, but its mark is not this claim's (an earlier claim sent it first, or the order was taken meanwhile): it stays", "order", id)
	}
	return errors.Join(err, cerr)
}
