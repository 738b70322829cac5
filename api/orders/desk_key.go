package orders

import (
	"context"
	"errors"
	"fmt"
	"time"

	"parla/providers"
)

// One key, one payment. The page makes an order key when its form is first filled and
// sends it with every checkout of that order, from any tab. A key whose order is paid (or
// whose checkout was completed and awaits the payment notice) takes no second checkout:
// the desk answers AlreadyPaidError, which leads to that order's page. A key whose
// checkout is still open gets a new checkout only after the old one is closed at the
// payment provider, so that two checkouts of one order can never both be paid.

// ErrAlreadyPaid is wrapped by AlreadyPaidError.
var ErrAlreadyPaid = errors.New("this order is paid already")

// AlreadyPaidError refuses a second checkout of a paid order and names that order.
type AlreadyPaidError struct {
	Order Order
}

func (e *AlreadyPaidError) Error() string {
	return fmt.Sprintf("order %s of this key is %s", e.Order.ID, e.Order.Status)
}

func (e *AlreadyPaidError) Unwrap() error { return ErrAlreadyPaid }

// validKey checks the shape of an order key: 16–64 URL-safe characters, or none.
func validKey(key string) error {
	if key == "" {
		return nil
	}
	if len(key) < 16 || len(key) > 64 {
		return bad("bad_request", "order.key must have 16 to 64 characters")
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return bad("bad_request", "order.key may hold only letters, digits, - and _")
		}
	}
	return nil
}

// settleKey makes way for a new checkout under key: it refuses when an order of the key
// is paid or its checkout completed, and closes the key's open checkouts otherwise. The
// caller holds the key's lock until its own order is stored.
func (d *Desk) settleKey(ctx context.Context, svc Service, key string) error {
	if key == "" {
		return nil
	}
	// Unpaid orders older than a checkout's life cannot be paid any more.
	list, err := d.orders.ByKey(ctx, svc, key, d.cfg.Now().Add(-d.cfg.CheckoutTTL-5*time.Minute))
	if err != nil {
		return err
	}
	for _, o := range list {
		if o.Paid() {
			return &AlreadyPaidError{Order: o}
		}
	}
	for _, o := range list {
		if o.SessionID == "" {
			// Its checkout was never opened (the provider failed): nothing can pay it.
			if _, err := d.orders.Expire(ctx, o.ID); err != nil {
				return err
			}
			continue
		}
		s, err := d.payments.ExpireCheckout(ctx, o.SessionID)
		if err != nil && !errors.Is(err, providers.ErrSessionNotFound) {
			return err
		}
		if err == nil && (s.Status == "complete" || s.Paid()) {
			// Paid; the provider's notice has not arrived yet.
			return &AlreadyPaidError{Order: o}
		}
		if o.Status == AwaitingPayment {
			if _, err := d.orders.Expire(ctx, o.ID); err != nil {
				return err
			}
			d.log.Info("checkout replaced", "order", o.ID, "service", svc)
		}
	}
	return nil
}

// holdKey checks an order key, takes its lock and settles it (settleKey). The returned
// function releases the lock; call it once the new order's checkout is open.
func (d *Desk) holdKey(ctx context.Context, svc Service, key string) (func(), error) {
	if err := validKey(key); err != nil {
		return func() {}, err
	}
	if key == "" {
		return func() {}, nil
	}
	unlock := d.keys.Lock(string(svc) + ":" + key)
	if err := d.settleKey(ctx, svc, key); err != nil {
		unlock()
		return func() {}, err
	}
	return unlock, nil
}

// PaidByKey returns the paid order of a key, or an error wrapping ErrNotFound when none
// is paid (a checkout completed whose payment notice is on its way counts as paid).
func (d *Desk) PaidByKey(ctx context.Context, svc Service, key string) (Order, error) {
	if key == "" {
		return Order{}, bad("bad_request", "key is required")
	}
	if err := validKey(key); err != nil {
		return Order{}, err
	}
	list, err := d.orders.ByKey(ctx, svc, key, d.cfg.Now().Add(-d.cfg.CheckoutTTL-5*time.Minute))
	if err != nil {
		return Order{}, err
	}
	for _, o := range list {
		if o.Paid() {
			return o, nil
		}
	}
	for _, o := range list {
		if o.Status != AwaitingPayment || o.SessionID == "" {
			continue
		}
		if s, err := d.payments.GetCheckout(ctx, o.SessionID); err == nil && (s.Status == "complete" || s.Paid()) {
			return o, nil
		}
	}
	return Order{}, fmt.Errorf("%w: no paid order has this key", ErrNotFound)
}
