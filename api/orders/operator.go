package orders

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"parla/api/orders/jobs"
	"parla/providers"
)

// Operator is the order book as the admin area sees it: find orders, read an order's
// timeline, and the operator's actions (resend the letter, retry, refund, extend a link).
// Every action is written to the audit log, and each is safe to send twice: a form's once
// key runs it at most once, and each action checks the order's row before it acts.
type Operator struct {
	book  *Book
	audit *auditRows
}

// Operator returns the book's operator side (for the admin area).
func (b *Book) Operator() *Operator {
	return &Operator{book: b, audit: &auditRows{db: b.orders.db}}
}

// RiverClient is the book's River client, for River's own UI (riverui) in the admin area:
// a *river.Client[*sql.Tx] on SQLite, a *river.Client[pgx.Tx] on Postgres.
func (b *Book) RiverClient() any { return b.queue.Client() }

// Actor is who acts: "password" (a signed-in session) or "token" (a script), from which
// address, and the once key of the form sent (empty: no repeat protection).
type Actor struct {
	Who, IP, Once string
}

// Outcome is how an action ended, as the audit log recorded it.
type Outcome struct {
	Action string
	Result string // "ok: …", "refused: …" or "error: …"
	// Repeated: this form was sent before; nothing was done again and Result is the first's.
	Repeated bool
}

// RefusedError is an action the order's state does not allow; Reason says why, for the
// operator.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

func refuse(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// MaxExtendDays bounds one extension of a link, and MaxLinkAhead how far ahead of now a
// link may be made to last.
const (
	MaxExtendDays = 30
	MaxLinkAhead  = 60 * 24 * time.Hour
)

// Search lists the orders matching s, newest first.
func (op *Operator) Search(ctx context.Context, s Search) ([]Order, error) {
	return op.book.orders.search(ctx, s, op.book.cfg.Now(), op.book.cfg.JobTimeout)
}

// Get loads one order.
func (op *Operator) Get(ctx context.Context, id string) (Order, error) {
	return op.book.orders.Get(ctx, id)
}

// JobTimeout is how long one fulfilment may run; a processing order paid longer ago is stuck.
func (op *Operator) JobTimeout() time.Duration { return op.book.cfg.JobTimeout }

// Audit lists the newest audit entries, of one order when orderID is set.
func (op *Operator) Audit(ctx context.Context, orderID string, limit int) ([]AuditEntry, error) {
	return op.audit.list(ctx, orderID, limit)
}

// Record writes an entry that is not an order action (a sign-in), with its result.
func (op *Operator) Record(ctx context.Context, by Actor, action, result string) error {
	_, err := op.audit.begin(ctx, "record:"+randomString(16), AuditEntry{ID: auditID(), Actor: by.Who,
		IP: by.IP, Action: action, Result: result, At: op.book.cfg.Now()})
	return err
}

// Timeline is an order's story for the operator.
type Timeline struct {
	Order    Order
	Bought   Kept // what was bought: from the parameters while kept, then from kept.json
	Events   []Step
	Attempts []jobs.Attempt
	Audit    []AuditEntry
}

// Step is one dated step of an order.
type Step struct {
	At   time.Time
	What string
}

// Timeline reads an order, its jobs' attempts and its audit entries.
func (op *Operator) Timeline(ctx context.Context, id string) (Timeline, error) {
	o, err := op.book.orders.Get(ctx, id)
	if err != nil {
		return Timeline{}, err
	}
	t := Timeline{Order: o, Bought: keptOf(o, nil)}
	if string(o.Params) == "{}" && o.ResultKey != "" {
		if k, err := op.book.Results.Kept(ctx, o); err == nil {
			k.Transcript = nil
			t.Bought = k
		}
	}
	if t.Attempts, err = op.book.queue.Attempts(ctx, id); err != nil {
		return t, err
	}
	t.Events = timelineEvents(o, t.Attempts)
	if t.Audit, err = op.audit.list(ctx, id, 50); err != nil {
		return t, err
	}
	return t, nil
}

// timelineEvents are an order's dated steps, oldest first: created, paid, each attempt,
// e-mailed, delivered, and when the link lapses; then what has no date (refunded).
func timelineEvents(o Order, attempts []jobs.Attempt) []Step {
	var ev []Step
	add := func(at time.Time, what string) {
		if !at.IsZero() {
			ev = append(ev, Step{At: at, What: what})
		}
	}
	add(o.CreatedAt, "created")
	add(o.PaidAt, "paid")
	for _, a := range attempts {
		what := fmt.Sprintf("%s attempt %d", a.Job, a.Attempt)
		switch {
		case a.Error != "":
			what += " failed: " + a.Error
		case a.State == "completed":
			what += " finished" // delivered, or gave up and handed over to the refund
		default:
			what += " (" + a.State + ")"
		}
		add(a.At, what)
	}
	add(o.MailedAt, "e-mailed")
	add(o.DoneAt, "delivered")
	add(o.LinkExpiresAt, "link expires")
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].At.Before(ev[j].At) })
	if o.Status == Refunded {
		ev = append(ev, Step{What: "refunded"})
	}
	return ev
}

// auditID is an audit entry's id: its time in nanoseconds first, so entries written in
// the same millisecond still list in the order they were made.
func auditID() string { return fmt.Sprintf("%016x-", time.Now().UnixNano()) + randomString(6) }

// act runs one audited action under its once key: a second sending of the same form does
// nothing and answers the first's result.
func (op *Operator) act(ctx context.Context, by Actor, action, orderID, detail string, fn func(auditID string) (string, error)) (Outcome, error) {
	once := by.Once
	if once == "" {
		once = randomString(16)
	}
	once = action + ":" + orderID + ":" + once
	id := auditID()
	fresh, err := op.audit.begin(ctx, once, AuditEntry{ID: id, Actor: by.Who, IP: by.IP, Action: action,
		OrderID: orderID, Detail: detail, Result: "started", At: op.book.cfg.Now()})
	if err != nil {
		return Outcome{Action: action}, err
	}
	if !fresh {
		prior, err := op.audit.byOnce(ctx, once)
		return Outcome{Action: action, Result: prior.Result, Repeated: true}, err
	}
	msg, err := fn(id)
	result := "ok: " + msg
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		result = "refused: " + refused.Reason
	case errors.Is(err, ErrNotFound):
		result = "refused: no such order"
	case err != nil:
		result = "error: " + err.Error()
	}
	if err2 := op.audit.finish(context.WithoutCancel(ctx), id, result); err2 != nil {
		err = errors.Join(err, err2)
	}
	return Outcome{Action: action, Result: result}, err
}

// resendable is the letter the operator's Resend sends of o now: the link of a delivered
// order whose file is kept and link lives, or the news of a refunded order; refused for any
// other.
func resendable(o Order, now time.Time) (string, error) {
	switch {
	case o.Status == Refunded:
		return letterRefunded, nil
	case o.Status != Done || o.ResultKey == "":
		return "", refuse("only a delivered order whose file is kept, or a refunded one, can be sent again (it is %s)", o.Status)
	case !now.Before(o.LinkExpiresAt):
		return "", refuse("the link has lapsed: extend it first")
	}
	return letterResent, nil
}

// Resend sends the order's letter again, to the address the order still keeps or to the
// one the operator typed (to), and records the order mailed: a delivered order's link
// (while it lives), or a refunded order's news.
func (op *Operator) Resend(ctx context.Context, by Actor, id, to string) (Outcome, error) {
	detail := "to the kept address"
	if to != "" {
		detail = "to a typed address"
	}
	return op.act(ctx, by, "resend", id, detail, func(auditID string) (string, error) {
		o, err := op.book.orders.Get(ctx, id)
		if err != nil {
			return "", err
		}
		kind, err := resendable(o, op.book.cfg.Now())
		if err != nil {
			return "", err
		}
		if to != "" {
			if to, err = ValidateEmail(to, to); err != nil {
				return "", refuse("the address is not valid")
			}
		} else if to = o.Email; to == "" {
			return "", refuse("the address was erased when the letter was sent: type one")
		}
		// Each resend is a letter of its own: its audit id makes its Message-ID.
		if err := op.book.fulfil.send(ctx, o, kind, to, letterResent+"."+auditID); err != nil {
			return "", err
		}
		// The visitor has the link now: the order leaves the unmailed list, its address goes.
		if err := op.book.fulfil.fence.MarkMailed(ctx, id, op.book.cfg.Now()); err != nil {
			return "", err
		}
		return "letter sent " + detail, nil
	})
}

// Retry runs a failed order's fulfilment again: the order goes back to paid, its pending
// refund is cancelled, and its job runs once more (delivered, or failed and refunded again).
// A refunded order cannot be retried: its money is back.
func (op *Operator) Retry(ctx context.Context, by Actor, id string) (Outcome, error) {
	return op.act(ctx, by, "retry", id, "", func(string) (string, error) {
		o, err := op.book.orders.Get(ctx, id)
		if err != nil {
			return "", err
		}
		switch o.Status {
		case Failed:
		case Refunded:
			return "", refuse("a refunded order cannot be retried")
		default:
			return "", refuse("only a failed order can be retried (it is %s)", o.Status)
		}
		if running, err := op.book.queue.RefundRunning(ctx, id); err != nil {
			return "", err
		} else if running {
			return "", refuse("its refund is running now")
		}
		changed, err := op.book.orders.retryFailed(ctx, id)
		if err != nil {
			return "", err
		}
		if !changed {
			return "", refuse("the order changed meanwhile, or its refund went to the payment provider; reload")
		}
		// The refund job, should it run after all, finds the order no longer failed and
		// does nothing (fulfiller.refund); cancelling it keeps River's view honest.
		if err := op.book.queue.CancelRefund(ctx, id); err != nil {
			op.book.log.Warn("cancelling the refund of a retried order", "order", id, "err", err)
		}
		return op.book.queue.RetryFulfilment(ctx, id)
	})
}

// Refund returns an order's money through the payment provider (one refund per order,
// whatever is clicked: the provider's idempotency key is the order's) and records it. A
// paid order still waiting or processing has its job cancelled first; a failed one takes
// the fulfilment's own refund path (with the letter, while the address is kept); a
// delivered one is refunded and keeps its file until the link lapses.
func (op *Operator) Refund(ctx context.Context, by Actor, id string) (Outcome, error) {
	return op.act(ctx, by, "refund", id, "", func(string) (string, error) {
		o, err := op.book.orders.Get(ctx, id)
		if err != nil {
			return "", err
		}
		f := op.book.fulfil
		switch {
		case o.Status == Refunded:
			return "already refunded", nil
		case !o.Paid():
			return "", refuse("nothing was paid for this order (it is %s)", o.Status)
		case o.Status == Done || o.Status == Expired:
			if o.PaymentIntent == "" {
				return "", refuse("no payment id is known for this order")
			}
			// The provider's call is recorded first, so an answer lost after the provider
			// refunded leaves the order in the operator's stuck list, not done and unseen.
			if marked, err := op.book.orders.markDeliveredRefundSent(ctx, id, op.book.cfg.Now()); err != nil {
				return "", err
			} else if !marked {
				return "", refuse("the order changed meanwhile; reload")
			}
			if err := f.payments.Refund(ctx, o.PaymentIntent, "refund-"+o.ID); err != nil {
				if errors.Is(err, providers.ErrNotRefunded) {
					err = errors.Join(err, op.book.orders.clearDeliveredRefundSent(ctx, id))
				}
				return "", fmt.Errorf("refunding order %s: %w", id, err)
			}
			changed, err := op.book.orders.refundDelivered(ctx, id, "operator_refund")
			if err != nil {
				return "", err
			}
			if changed {
				f.observer.Observe(Event{Kind: EventRefunded, Service: o.Service, Reason: "operator_refund",
					Amount: o.Amount, Currency: o.Currency})
			}
			return "refunded at the payment provider", nil
		}
		if o.Status == Paid || o.Status == Processing {
			// A claim first: a run still producing the order finds every later write of
			// its own refused (its letter, its result), so nothing is delivered after this.
			claim, _, err := f.fence.claim(ctx, id)
			if errors.Is(err, ErrClaimLost) {
				return "", refuse("the order changed meanwhile; reload")
			} else if err != nil {
				return "", err
			}
			if ok, err := f.fence.failFenced(ctx, id, claim, "operator_refund"); err != nil {
				return "", err
			} else if !ok {
				return "", refuse("the order changed meanwhile; reload")
			}
			if err := op.book.queue.CancelFulfilment(ctx, id); err != nil {
				return "", err
			}
		}
		if err := f.refund(ctx, id, true); err != nil {
			return "", err
		}
		op.book.queue.CancelRefund(ctx, id) //nolint:errcheck // it finds the order refunded anyway
		return "refunded at the payment provider", nil
	})
}

// Extend makes a delivered order's link last days longer (1–MaxExtendDays), from its
// expiry or from now if it has lapsed, never beyond MaxLinkAhead from now; the file must
// still be kept.
func (op *Operator) Extend(ctx context.Context, by Actor, id string, days int) (Outcome, error) {
	return op.act(ctx, by, "extend", id, fmt.Sprintf("%d days", days), func(string) (string, error) {
		if days < 1 || days > MaxExtendDays {
			return "", refuse("a link is extended by 1 to %d days", MaxExtendDays)
		}
		o, err := op.book.orders.Get(ctx, id)
		if err != nil {
			return "", err
		}
		if o.ResultKey == "" || o.Status != Done {
			return "", refuse("only a delivered order whose file is kept has a link to extend (it is %s)", o.Status)
		}
		now := op.book.cfg.Now()
		to, ok := extendedExpiry(o.LinkExpiresAt, now, days)
		if !ok {
			return "", refuse("the link already lasts as long as it may (%s)", o.LinkExpiresAt.Format(time.DateOnly))
		}
		changed, err := op.book.orders.extendLink(ctx, id, o.LinkExpiresAt, to)
		if err != nil {
			return "", err
		}
		if !changed {
			return "", refuse("the order changed meanwhile; reload")
		}
		return "link lasts until " + to.UTC().Format(time.RFC3339), nil
	})
}

// extendedExpiry is a link's new expiry after days more: counted from the old expiry, or
// from now when it has lapsed, and capped at MaxLinkAhead from now. ok is false when that
// would not move it.
func extendedExpiry(expires, now time.Time, days int) (time.Time, bool) {
	from := expires
	if from.Before(now) {
		from = now
	}
	to := from.Add(time.Duration(days) * 24 * time.Hour)
	if limit := now.Add(MaxLinkAhead); to.After(limit) {
		to = limit
	}
	return to, to.After(expires)
}
