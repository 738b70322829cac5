package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"parla/api/orders/jobs"
	"parla/providers"
)

// Cashier binds payments to orders: it verifies checkout sessions with the payment
// provider, acts on its webhook events once each, and queues the one fulfilment job of a
// paid order, whichever of the webhook and the confirmation page comes first.
type Cashier struct {
	cfg      Config
	orders   *Store
	uploads  *Uploads
	events   *eventRows
	payments providers.Payments
	queue    *jobs.Queue
	observer Observer
	log      *slog.Logger
	// OtherSessions, when set, is handed the events of sessions that pay for no order (the
	// API's credit, api/credit), and those of a payment refunded or disputed at the provider
	// (PaymentIntent, no session), and reports whether it knew them. Set before serving.
	OtherSessions func(ctx context.Context, ev PaymentEvent) (handled bool, err error)
}

// Lookup is a checkout session with the order it pays for.
type Lookup struct {
	Session providers.CheckoutSession
	Order   Order
}

// Lookup verifies a session with the payment provider and returns it with its order.
// A paid session starts fulfilment if the webhook has not done so yet.
func (c *Cashier) Lookup(ctx context.Context, svc Service, sessionID string) (Lookup, error) {
	o, err := c.orderFor(ctx, svc, sessionID)
	if err != nil {
		return Lookup{}, err
	}
	if o.Paid() {
		// Paid is settled (a signed webhook or an earlier lookup verified it): the order
		// row answers, and the payment provider is not asked again on every poll. A paid
		// order not yet started gets its job, should a crash have come between the two.
		if o.Status == Paid {
			if err := c.queue.Fulfil(ctx, o.ID); err != nil {
				return Lookup{}, err
			}
		}
		return Lookup{Session: paidSession(o), Order: o}, nil
	}
	s, err := c.payments.GetCheckout(ctx, sessionID)
	if err != nil {
		return Lookup{}, fmt.Errorf("verifying session of order %s: %w", o.ID, err)
	}
	if s.OrderID != "" && s.OrderID != o.ID {
		return Lookup{}, fmt.Errorf("session of order %s names order %s: %w", o.ID, s.OrderID, ErrNotFound)
	}
	if s.Paid() && !o.Paid() {
		if err := c.confirmPaid(ctx, o, s); err != nil {
			return Lookup{}, err
		}
		if o, err = c.orders.Get(ctx, o.ID); err != nil {
			return Lookup{}, err
		}
	}
	return Lookup{Session: s, Order: o}, nil
}

// paidSession is what the lookup says of a paid order's session, from the order itself.
func paidSession(o Order) providers.CheckoutSession {
	return providers.CheckoutSession{ID: o.SessionID, OrderID: o.ID, Status: "complete", PaymentStatus: "paid",
		PaymentIntent: o.PaymentIntent, Email: o.Email, AmountTotal: o.Amount, Currency: o.Currency}
}

// Result returns the order paid through a session. It fails with ErrUnpaid when the
// provider does not say it is paid.
func (c *Cashier) Result(ctx context.Context, svc Service, sessionID string) (Order, error) {
	o, err := c.orderFor(ctx, svc, sessionID)
	if err != nil {
		return Order{}, err
	}
	if o.Paid() {
		return o, nil
	}
	l, err := c.Lookup(ctx, svc, sessionID)
	if err != nil {
		return Order{}, err
	}
	if !l.Order.Paid() {
		return l.Order, ErrUnpaid
	}
	return l.Order, nil
}

func (c *Cashier) orderFor(ctx context.Context, svc Service, sessionID string) (Order, error) {
	o, err := c.orders.BySession(ctx, sessionID)
	if err != nil {
		return o, err
	}
	if o.Service != svc {
		return o, ErrWrongService
	}
	return o, nil
}

// PaymentEvent is a verified notification from the payment provider.
type PaymentEvent struct {
	ID      string
	Type    string
	Session providers.CheckoutSession
	// PaymentIntent names the payment of a charge.refunded or charge.dispute.created event.
	PaymentIntent string
}

// HandleEvent acts on a verified webhook event once; a repeated event id returns
// ErrDuplicateEvent. Events may arrive in any order.
func (c *Cashier) HandleEvent(ctx context.Context, ev PaymentEvent) error {
	fresh, err := c.events.Record(ctx, ev.ID, ev.Type, c.cfg.Now())
	if err != nil {
		return err
	}
	if !fresh {
		return ErrDuplicateEvent
	}
	if err := c.applyEvent(ctx, ev); err != nil {
		// Forget it so that the provider's retry is handled again.
		if err2 := c.events.Forget(ctx, ev.ID); err2 != nil {
			c.log.Error("forgetting failed event", "event", ev.ID, "err", err2)
		}
		return err
	}
	return nil
}

func (c *Cashier) applyEvent(ctx context.Context, ev PaymentEvent) error {
	if ev.Session.ID == "" {
		if ev.PaymentIntent != "" && c.OtherSessions != nil {
			_, err := c.OtherSessions(ctx, ev) // a refunded or disputed payment: a key's, if any
			return err
		}
		return nil
	}
	o, err := c.orders.BySession(ctx, ev.Session.ID)
	if errors.Is(err, ErrNotFound) && c.OtherSessions != nil {
		if handled, err := c.OtherSessions(ctx, ev); handled || err != nil {
			return err
		}
	}
	if errors.Is(err, ErrNotFound) {
		c.log.Warn("webhook for an unknown session", "event", ev.ID, "type", ev.Type)
		return nil
	}
	if err != nil {
		return err
	}
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		if ev.Session.Paid() {
			return c.confirmPaid(ctx, o, ev.Session)
		}
	case "checkout.session.expired", "checkout.session.async_payment_failed":
		if _, err := c.orders.Expire(ctx, o.ID); err != nil {
			return err
		}
	}
	return nil
}

// holdsUpload claims an audio order's upload for it now that it is paid: the first paid
// order of a file wins, a second one (another tab, another checkout) is refunded.
func (c *Cashier) holdsUpload(ctx context.Context, o Order) bool {
	p, err := decodeTranscriptParams(o.Params)
	if err != nil || p.Upload == "" {
		return true // nothing to claim: fulfilment reports what is wrong
	}
	ok, err := c.uploads.claimPaid(ctx, p.Upload, o.ID)
	if err != nil {
		c.log.Warn("claiming the upload of a paid order", "order", o.ID, "err", err)
		return true // the job checks again; a database error must not refund
	}
	return ok
}

// confirmPaid records the payment (once) and makes sure the one fulfilment job exists. A
// payment that cannot be fulfilled is refunded at once, with a letter that says why: one
// for an order that had expired and been erased before the money came (an asynchronous
// method, a webhook days late), one for a file another paid order holds, or one whose
// amount is not the order's price (always compared: a session of total 0, as a 100 %
// discount makes, is no payment of a priced order).
func (c *Cashier) confirmPaid(ctx context.Context, o Order, s providers.CheckoutSession) error {
	late := o.Status == Expired && o.PaidAt.IsZero()
	changed, err := c.orders.MarkPaid(ctx, o.ID, s.PaymentIntent, c.cfg.Now())
	if err != nil {
		return err
	}
	if !changed {
		return c.queue.Fulfil(ctx, o.ID) // already paid: make sure its job exists
	}
	c.log.Info("order paid", "order", o.ID)
	c.observer.Observe(paidEvent(o, s))
	reason := ""
	switch {
	case late:
		reason = "payment_late"
	case o.Service == STT && !c.holdsUpload(ctx, o):
		reason = "upload_taken"
	case s.AmountTotal != o.Amount || !strings.EqualFold(s.Currency, o.Currency):
		reason = "amount_mismatch"
		c.log.Error("paid amount differs from the order's price", "order", o.ID,
			"paid", s.AmountTotal, "currency", s.Currency, "price", o.Amount)
	}
	if reason == "" {
		return c.queue.Fulfil(ctx, o.ID)
	}
	c.log.Warn("payment cannot be fulfilled, refunding", "order", o.ID, "reason", reason)
	if failed, err := c.orders.FailPayment(ctx, o.ID, reason, s.Email); err != nil || !failed {
		return err // not failed here: whoever moved the order owns what follows
	}
	c.observer.Observe(Event{Kind: EventFailed, Service: o.Service, Reason: reason})
	return c.queue.Refund(ctx, o.ID)
}

// paidEvent is what was paid for an order: the provider's amount and currency when it says
// them, else the order's price.
func paidEvent(o Order, s providers.CheckoutSession) Event {
	ev := Event{Kind: EventPaid, Service: o.Service, Amount: o.Amount, Currency: o.Currency}
	if s.AmountTotal > 0 && s.Currency != "" {
		ev.Amount, ev.Currency = s.AmountTotal, s.Currency
	}
	return ev
}
