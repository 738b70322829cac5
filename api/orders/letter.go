package orders

import (
	"context"
	"errors"
	"fmt"
	"time"

	"parla/providers"
	"parla/providers/mail"
)

// The letter: an order's one message to its visitor (its link when delivered, else the
// news of its refund), sent at most once.

// mailOnce sends the order's letter (its link when delivered, else the news of its
// refund) at most once: the send is claimed in the database first, by the holder of claim
// (the run's, or the refund's) while the order is running (or failed, for the refund's
// news). A claim taken before means it was sent, or a crash came between the claim and
// the send, or its fate is unknown: it is not sent again (the operator's Resend is the
// remedy). A failed send ends as notMailed says.
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
		return f.notMailed(ctx, o.ID, claim, err)
	}
	return nil
}

// letterFate is what a failed send of a letter says of it.
type letterFate int

const (
	letterInDoubt  letterFate = iota // no answer after the data: it may be in the visitor's box
	letterNotSent                    // certainly not sent (refused for now, or before the data)
	letterRejected                   // refused for good by the mail server (a 5xx reply)
)

// fateOf reads a Mailer's error (providers.ErrNotSent, mail.ErrRefusedPermanent).
func fateOf(err error) letterFate {
	switch {
	case errors.Is(err, mail.ErrRefusedPermanent):
		return letterRejected
	case errors.Is(err, providers.ErrNotSent):
		return letterNotSent
	}
	return letterInDoubt
}

// notMailed ends the letter's send that failed with err, for the holder of claim and its
// letter's claim. In doubt, the claim stays and the error is logged naming the order: never
// sent twice. Certainly not sent, the claim is given back and err returned, so the run is
// retried with the queue's backoff, and resendLetters sends it after its order ended. Refused
// for good, the claim stays, the refusal is recorded for the operator's list, and the order
// goes on without it (nil: the link is on the confirmation page). A fenced write refused
// (the run lost the order) changes nothing more: ErrClaimLost.
func (f *fulfiller) notMailed(ctx context.Context, id string, claim int64, err error) error {
	fate := fateOf(err)
	if fate == letterInDoubt {
		f.log.Error("the letter may have been sent; not sending it again (the operator's Resend is the remedy)", "order", id, "err", err)
		return err
	}
	record := f.fence.unclaimLetter
	if fate == letterRejected {
		record = f.fence.rejectLetter
	}
	ok, ferr := record(context.WithoutCancel(ctx), id, claim, f.cfg.Now())
	switch {
	case ferr != nil:
		return errors.Join(err, ferr)
	case !ok:
		return fmt.Errorf("%w (after %w)", ErrClaimLost, err)
	case fate == letterRejected:
		f.log.Error("the mail server refused the letter for good; the order goes on without it (the operator's Resend is the remedy)", "order", id, "err", err)
		return nil
	}
	return err
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

// resendLetters' bounds: how long after a letter's last certain failure it is sent again,
// and how many letters one pass sends at most.
const (
	letterRetryAfter = 10 * time.Minute
	resendBatch      = 20
)

// resendLetters is the reconciler's step for letters: it sends again, claim first, the
// letters of ended orders (done, or refunded) that certainly did not leave (refused for
// now, or failing before the data, until their run gave up or went on without them), each
// letterRetryAfter after its last failure, at most resendBatch a pass, while the order's
// link may live (LinkTTL since its payment); it returns how many it sent. A letter whose
// fate is unknown, or that the server refused for good, is left to the operator's list;
// one taken meanwhile (sent, claimed, refunded) is skipped.
func (f *fulfiller) resendLetters(ctx context.Context) (int, error) {
	now := f.cfg.Now()
	failedBefore, paidAfter := now.Add(-letterRetryAfter), now.Add(-f.cfg.LinkTTL)
	ids, err := f.fence.unsentLetters(ctx, failedBefore, paidAfter, resendBatch)
	errs := []error{err}
	sent := 0
	for _, id := range ids {
		o, err := f.orders.Get(ctx, id)
		var claim int64
		if err == nil {
			claim, err = f.fence.claimUnsentLetter(ctx, id, failedBefore, paidAfter, f.cfg.Now())
		}
		if err == nil {
			if err = f.mail(ctx, o, o.Status == Done); err != nil {
				err = f.notMailed(ctx, id, claim, err)
			} else {
				sent++
				f.log.Info("the letter of an ended order sent again", "order", id)
			}
		}
		if !errors.Is(err, ErrClaimLost) {
			errs = append(errs, err)
		}
	}
	return sent, errors.Join(errs...)
}
