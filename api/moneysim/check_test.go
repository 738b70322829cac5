package moneysim

import (
	"errors"
	"fmt"
	"slices"

	"parla/api/orders"
)

// The invariants, after every step: no money made or lost on any key, at most one refund of
// any payment at the provider, at most one letter per purpose, and no order both delivered
// and refunded (unless the operator refunded it delivered).
func (s *sim) check() error {
	var errs []error
	for _, k := range s.keys {
		errs = append(errs, s.checkKey(k))
	}
	for _, o := range s.orders {
		errs = append(errs, s.checkOrder(o))
	}
	return errors.Join(errs...)
}

// keyBook is a key's money as its rows tell it, in thousandths of a cent.
type keyBook struct {
	bought, balance, refunded int64
	held                      int64 // the key's row's held total
	status                    string
	heldCalls, settledCalls   int64 // its calls held and settled
}

// readKey reads a key's money in one statement, so that one snapshot answers (a release
// by the reconciler's job may commit at any time).
func (s *sim) readKey(id string) (keyBook, error) {
	var b keyBook
	sum := func(state string) string {
		return `(SELECT COALESCE(SUM(amount), 0) FROM credit_calls WHERE key_id = k.id AND state = '` + state + `')`
	}
	err := s.w.db.QueryRowContext(s.ctx, `SELECT k.amount * 1000, k.balance, k.held, k.refunded * 1000, k.status, `+
		sum("held")+`, `+sum("settled")+` FROM credit_keys k WHERE k.id = ?`, id).Scan(
		&b.bought, &b.balance, &b.held, &b.refunded, &b.status, &b.heldCalls, &b.settledCalls)
	if err != nil {
		return b, fmt.Errorf("reading key %s: %w", id, err)
	}
	return b, nil
}

// checkKey: bought = balance + held + settled + refunded; what is settled is what the
// simulation settled; the provider refunded the key's payment at most once, never more
// than was paid; one letter.
func (s *sim) checkKey(k *key) error {
	b, err := s.readKey(k.id)
	if err != nil {
		return err
	}
	var errs []error
	if sum := b.balance + b.heldCalls + b.settledCalls + b.refunded; sum != b.bought || b.balance < 0 {
		errs = append(errs, fmt.Errorf("key %s (%s): bought %d ≠ balance %d + held %d + settled %d + refunded %d = %d (thousandths of a cent)",
			k.id, b.status, b.bought, b.balance, b.heldCalls, b.settledCalls, b.refunded, sum))
	}
	if b.held != b.heldCalls {
		errs = append(errs, fmt.Errorf("key %s: its row holds %d, its held calls %d", k.id, b.held, b.heldCalls))
	}
	if b.settledCalls != k.settled {
		errs = append(errs, fmt.Errorf("key %s: %d settled in the ledger, %d by its calls", k.id, b.settledCalls, k.settled))
	}
	if k.spentEnded {
		errs = append(errs, fmt.Errorf("key %s: a call was held after its payment was refunded or disputed at the provider", k.id))
	}
	errs = append(errs, s.onceRefunded("key "+k.id, k.intent))
	if n := s.w.mail.count("credit-" + k.id); n > 1 {
		errs = append(errs, fmt.Errorf("key %s: its letter sent %d times", k.id, n))
	}
	return errors.Join(errs...)
}

// onceRefunded: the provider was asked to refund a payment under one idempotency key at
// most (a retry under the same key is the same refund; under another, a second one).
func (s *sim) onceRefunded(what, intent string) error {
	if intent == "" {
		return nil
	}
	calls, err := s.w.pay.RefundCalls(s.ctx, intent)
	if err != nil {
		return err
	}
	var keys []string
	for _, c := range calls {
		if !slices.Contains(keys, c.IdempotencyKey) {
			keys = append(keys, c.IdempotencyKey)
		}
	}
	if len(keys) > 1 {
		return fmt.Errorf("%s: its payment %s asked to be refunded under %d keys at the provider (first %q, %q)",
			what, intent, len(keys), keys[0], keys[1])
	}
	return nil
}

// refunded: the provider refunded the payment.
func (s *sim) refunded(intent string) (bool, error) {
	if intent == "" {
		return false, nil
	}
	return s.w.pay.RefundedIntent(s.ctx, intent)
}

func (s *sim) checkOrder(o *order) error {
	got, err := s.w.book.Operator().Get(s.ctx, o.id)
	if err != nil {
		return err
	}
	refunded, err := s.refunded(o.intent)
	if err != nil {
		return err
	}
	delivered, told := s.w.mail.count("parla."+o.id+".delivered"), s.w.mail.count("parla."+o.id+".refunded")
	var errs []error
	errs = append(errs, s.onceRefunded("order "+o.id, o.intent))
	if delivered > 1 || told > 1 {
		errs = append(errs, fmt.Errorf("order %s: %d letters with its link, %d of its refund", o.id, delivered, told))
	}
	if delivered > 0 && told > 0 && !o.refundedDone {
		errs = append(errs, fmt.Errorf("order %s (%s): told both delivered and refunded", o.id, got.Status))
	}
	if refunded && got.Status == orders.Done && !o.refundedDone {
		errs = append(errs, fmt.Errorf("order %s: delivered (done) and refunded at the provider", o.id))
	}
	if o.healthy && got.Error == "production_failed" {
		errs = append(errs, fmt.Errorf("order %s (%s): given up as production_failed, but only a shutdown stopped its run", o.id, got.Status))
	}
	if got.Status == orders.Refunded && o.intent != "" && !refunded {
		errs = append(errs, fmt.Errorf("order %s: refunded, but its payment was never refunded at the provider", o.id))
	}
	return errors.Join(errs...)
}

// checkEnded is the end of a seed, every fault healed and the clock past every bound:
// every order paid at the provider is delivered or refunded, or in the operator's stuck
// list (its refund's fate unknown: the provider's dashboard tells), unpaid ones expired;
// every ended order's letter left or is in the operator's unmailed list; no call of any
// key is still held.
func (s *sim) checkEnded() error {
	var errs []error
	for _, o := range s.orders {
		errs = append(errs, s.ended(o))
	}
	for _, k := range s.keys {
		b, err := s.readKey(k.id)
		if err != nil {
			return err
		}
		if b.heldCalls != 0 {
			errs = append(errs, fmt.Errorf("key %s (%s): %d still held past every bound", k.id, b.status, b.heldCalls))
		}
	}
	return errors.Join(errs...)
}

// ended is an order's exit: paid at the provider, delivered (done, or expired since),
// refunded, or in the operator's stuck list; never paid, expired. Its letter left, or the
// operator's unmailed list shows it.
func (s *sim) ended(o *order) error {
	got, err := s.w.book.Operator().Get(s.ctx, o.id)
	if err != nil {
		return err
	}
	switch {
	case o.intent == "" && got.Status != orders.Expired:
		return fmt.Errorf("order %s: never paid, still %s past its checkout", o.id, got.Status)
	case got.Status == orders.Done && o.refundedDone:
		// The operator's refund of it delivered went out, its answer lost: the order is
		// still done, and the operator's stuck list must show it.
		if refunded, err := s.refunded(o.intent); err != nil || refunded {
			stuck, lerr := s.listed(o, orders.FilterStuck)
			if err != nil || lerr != nil || !stuck {
				return errors.Join(err, lerr, fmt.Errorf("order %s: the operator's refund of it delivered went out at the provider, and it is still done, not in the stuck list", o.id))
			}
		}
	case o.intent != "" && got.Status == orders.Expired && got.PaidAt.IsZero():
		return fmt.Errorf("order %s: paid at the provider, expired as unpaid and never refunded", o.id)
	case o.intent != "" && got.Status != orders.Done && got.Status != orders.Refunded && got.Status != orders.Expired:
		if stuck, err := s.listed(o, orders.FilterStuck); err != nil || !stuck {
			return errors.Join(err, fmt.Errorf("order %s: paid, still %s (error %q) past every bound, not in the operator's stuck list",
				o.id, got.Status, got.Error))
		}
	case (got.Status == orders.Done || got.Status == orders.Refunded) && !o.refundedDone:
		// The letter of its end: the link, or the refund's news. (The operator's refund
		// of a delivered order sends none: the operator speaks to that visitor.)
		sent := s.w.mail.count("parla."+o.id+".delivered") + s.w.mail.count("parla."+o.id+".refunded")
		if sent == 0 && !got.MailedAt.IsZero() {
			return fmt.Errorf("order %s (%s): recorded mailed, but its letter never left", o.id, got.Status)
		}
		if unmailed, err := s.listed(o, orders.FilterUnmailed); err != nil || sent == 0 && !unmailed {
			return errors.Join(err, fmt.Errorf("order %s (%s): its letter never left, and it is not in the operator's unmailed list", o.id, got.Status))
		}
	}
	return nil
}

// listed: the operator's filter lists the order.
func (s *sim) listed(o *order, f orders.Filter) (bool, error) {
	found, err := s.w.book.Operator().Search(s.ctx, orders.Search{Query: o.id, Filter: f})
	return len(found) > 0, err
}
