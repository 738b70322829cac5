package orders

import (
	"context"
	"errors"
	"fmt"

	"parla/providers"
)

// The letter: an order's one message to its visitor (its link when delivered, else the
// news of its refund), sent at most once.

// mailOnce sends the order's letter (its link when delivered, else the news of its
// refund) at most once: the send is claimed in the database first, by the holder of claim
// (the run's, or the refund's) while the order is running (or failed, for the refund's
// news). A claim taken before means it was sent, or a crash came between
// the claim and the send: it is not sent again (the operator's Resend is the remedy). A
// send that certainly did not leave (providers.ErrNotSent) gives the claim back for the
// retry; any other failure (the server answered late or hung up after the data, recording
// the send failed) keeps it: the letter may be in the visitor's box, so it is never sent
// again by itself.
func (f *fulfiller) mailOnce(ctx context.Context, o Order, claim int64, delivered bool) error {
	if o.Email == "" {
		return nil
	}
	status := Failed
	if delivered {
		status = Processing
	}
	ok, err := f.fence.claimLetter(ctx, o.ID, claim, status, f.cfg.Now())
	if err != nil {
		return err
	}
	if !ok {
		if held, err := f.fence.holds(ctx, o.ID, claim, status); err == nil && !held {
			return fmt.Errorf("mailing order %s: %w", o.ID, ErrClaimLost)
		}
		f.log.Warn("the letter was claimed before; not sent again", "order", o.ID)
		return nil
	}
	if err := f.mail(ctx, o, delivered); err != nil {
		if !errors.Is(err, providers.ErrNotSent) {
			f.log.Error("the letter may have been sent; not sending it again (the operator's Resend is the remedy)", "order", o.ID, "err", err)
			return err
		}
		if uerr := f.fence.unclaimLetter(context.WithoutCancel(ctx), o.ID, claim); uerr != nil {
			err = errors.Join(err, uerr)
		}
		return err
	}
	return nil
}

// mail sends the order's letter to the address it keeps, once: its link when delivered,
// else the news of its refund; then records it and erases the address.
func (f *fulfiller) mail(ctx context.Context, o Order, delivered bool) error {
	if o.Email == "" {
		return nil
	}
	kind := letterRefunded
	if delivered {
		kind = letterDelivered
	}
	// One letter of each kind per order: sent again after a crash between sending and
	// recording, it is the same message (same Message-ID; one outbox file).
	if err := f.send(ctx, o, kind, o.Email, kind); err != nil {
		return err
	}
	f.cfg.Checkpoint(o.ID, "sent")
	if err := f.fence.MarkMailed(ctx, o.ID, f.cfg.Now()); err != nil {
		return err
	}
	f.forgetEmail(ctx, o)
	return nil
}

// The kinds of letter an order's visitor receives, as the mailed event counts them.
const (
	letterDelivered = "delivered" // the link, by the fulfiller
	letterRefunded  = "refunded"  // the news of the refund
	letterResent    = "resent"    // the link again, by the operator (operator.go)
)

// send writes the order's letter of kind (the refund's news for letterRefunded, the link
// otherwise) and mails it to to, as Message-ID "parla.<order id>.<tag>": the one way an
// order's letter leaves, for the fulfiller and the operator's resend alike.
func (f *fulfiller) send(ctx context.Context, o Order, kind, to, tag string) error {
	var msg providers.Message
	var err error
	if kind == letterRefunded {
		msg, err = f.letters.Refunded(o)
	} else {
		msg, err = f.letters.Delivered(o, link(f.cfg.PublicURL, f.cfg.Routes.Page, o))
	}
	if err != nil {
		return fmt.Errorf("writing message for order %s: %w (%w)", o.ID, err, providers.ErrNotSent)
	}
	msg.ID, msg.To = "parla."+o.ID+"."+tag, to
	err = f.mailer.Send(ctx, msg)
	f.observer.Observe(Event{Kind: EventMailed, Service: o.Service, Reason: kind, Err: err})
	if err != nil {
		return fmt.Errorf("mailing order %s: %w", o.ID, err)
	}
	return nil
}

// forgetEmail erases the address at the payment provider too once the message is sent, so
// the session lookup no longer returns it.
func (f *fulfiller) forgetEmail(ctx context.Context, o Order) {
	if e, ok := f.payments.(providers.EmailEraser); ok && o.SessionID != "" {
		if err := e.EraseEmail(ctx, o.SessionID); err != nil {
			f.log.Warn("erasing the address at the payment provider", "order", o.ID, "err", err)
		}
	}
}
