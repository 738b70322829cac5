package moneysim

import (
	"errors"
	"fmt"
	"sync"

	"parla/api/credit"
	"parla/api/orders"
	"parla/providers/stripe"
)

// buyKey buys credit through the checkout; the webhook tells it, once or twice.
func (s *sim) buyKey() (string, error) {
	amount := int64(500 + 100*s.rng.IntN(16))
	co, err := s.w.credit.Shop.Open(s.ctx, credit.Purchase{Amount: amount, Email: "dev@example.com",
		EmailVerify: "dev@example.com", Locale: "en"})
	if err != nil {
		return "", fmt.Errorf("opening a credit checkout: %w", err)
	}
	if _, err := s.w.pay.Pay(s.ctx, co.SessionID); err != nil {
		return "", err
	}
	session, err := s.w.pay.GetCheckout(s.ctx, co.SessionID)
	if err != nil {
		return "", err
	}
	// The webhook, perhaps twice: the same event again (answered as a duplicate) or
	// another one for the same session.
	ids := []string{"evt_" + co.SessionID}
	switch s.rng.IntN(3) {
	case 1:
		ids = append(ids, ids[0])
	case 2:
		ids = append(ids, "evt_again_"+co.SessionID)
	}
	for _, id := range ids {
		ev := orders.PaymentEvent{ID: id, Type: stripe.EventCheckoutCompleted, Session: session}
		if err := s.w.book.Cashier.HandleEvent(s.ctx, ev); err != nil && !errors.Is(err, orders.ErrDuplicateEvent) {
			return "", fmt.Errorf("the credit's webhook: %w", err)
		}
	}
	r, err := s.w.credit.Shop.Result(s.ctx, co.SessionID)
	if err != nil {
		return "", err
	}
	k, err := s.w.credit.Ledger.Authenticate(s.ctx, r.Key)
	if err != nil {
		return "", err
	}
	s.keys = append(s.keys, &key{id: k.ID, intent: session.PaymentIntent, bought: amount})
	return fmt.Sprintf("key %s, %d c", k.ID, amount), nil
}

// idems are the Idempotency-Keys calls may carry: few, so that retries meet.
var idems = []string{"", "", "", "idem-a", "idem-b"}

// holdCall holds a call's price, as the API does before the call's work.
func (s *sim) holdCall() (string, error) {
	k, ok := one(s.rng, s.keys)
	if !ok {
		return "no key", nil
	}
	line, _ := s.hold(k, int64(1000+s.rng.IntN(60_000)), idems[s.rng.IntN(len(idems))])
	return line, nil
}

// hold holds amount on k under idem and records it; it reports whether it held.
func (s *sim) hold(k *key, amount int64, idem string) (string, bool) {
	h, err := s.w.credit.Ledger.Hold(s.ctx, k.id, credit.Call{Model: "tts-1", Units: 1, Amount: amount,
		Idem: idem, Fingerprint: "tts-1"})
	if err != nil {
		return fmt.Sprintf("key %s, %d %q: %s", k.id, amount, idem, outcome(err)), false
	}
	k.holds = append(k.holds, &hold{h: h, state: "held"})
	k.spentEnded = k.spentEnded || k.ended && !h.Repeat
	return fmt.Sprintf("key %s, %d %q: call %s (repeat %v)", k.id, amount, idem, h.ID, h.Repeat), true
}

// keyHold is a call's hold with its key.
type keyHold struct {
	k *key
	h *hold
}

// pickHold picks one of the calls whose hold is such, with its key.
func (s *sim) pickHold(such func(*hold) bool) (keyHold, bool) {
	var found []keyHold
	for _, k := range s.keys {
		for _, h := range k.holds {
			if such(h) {
				found = append(found, keyHold{k, h})
			}
		}
	}
	return one(s.rng, found)
}

// heldCall picks a call the simulation holds, with its key.
func (s *sim) heldCall() (*key, *hold, bool) {
	p, ok := s.pickHold(func(h *hold) bool { return h.state == "held" })
	return p.k, p.h, ok
}

func (s *sim) settleCall() (string, error) {
	k, h, ok := s.heldCall()
	if !ok {
		return "no call held", nil
	}
	return s.settleHold(k, h), nil
}

// settleHold settles h: the call's work was done and answered.
func (s *sim) settleHold(k *key, h *hold) string {
	err := s.w.credit.Ledger.Settle(s.ctx, h.h)
	if err == nil {
		h.state = "settled"
		k.settled += h.h.Amount
	} else {
		h.state = "lost" // given back meanwhile: the call answers an error
	}
	return fmt.Sprintf("call %s of key %s: %s", h.h.ID, k.id, outcome(err))
}

func (s *sim) releaseCall() (string, error) {
	k, h, ok := s.heldCall()
	if !ok {
		return "no call held", nil
	}
	err := s.w.credit.Ledger.Release(s.ctx, h.h)
	h.state = "released"
	return fmt.Sprintf("call %s of key %s: %s", h.h.ID, k.id, outcome(err)), nil
}

// lateEnd is a frozen node's call resuming: it settles or releases a hold that ended
// meanwhile (settled, released, or given back when its node was judged dead), which must
// change nothing; a killed call's hold not given back yet settles.
func (s *sim) lateEnd() (string, error) {
	p, ok := s.pickHold(func(h *hold) bool { return h.state != "held" && !h.h.Repeat })
	if !ok {
		return "no call ended", nil
	}
	if s.rng.IntN(2) == 0 {
		return fmt.Sprintf("late release of call %s (%s): %s", p.h.h.ID, p.h.state, outcome(s.w.credit.Ledger.Release(s.ctx, p.h.h))), nil
	}
	state := p.h.state
	err := s.w.credit.Ledger.Settle(s.ctx, p.h.h)
	if err == nil && state == "killed" {
		// Not given back yet: the resumed call's answer is charged.
		p.h.state, p.k.settled = "settled", p.k.settled+p.h.h.Amount
	}
	return fmt.Sprintf("late settle of call %s (%s): %s", p.h.h.ID, state, outcome(err)), nil
}

// burst is several calls of one key at once, each held then settled, as the API answers
// them concurrently, while two reconcilers give back the holds of dead nodes and those
// nodes' calls, resuming, release the same holds late: each is given back once.
func (s *sim) burst() (string, error) {
	k, ok := one(s.rng, s.keys)
	if !ok {
		return "no key", nil
	}
	n := 3 + s.rng.IntN(6)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); s.w.book.Reconcile(s.ctx) }() //nolint:errcheck // the checks judge
	}
	for _, h := range k.holds {
		if h.state == "killed" {
			wg.Add(1)
			go func() { defer wg.Done(); s.w.credit.Ledger.Release(s.ctx, h.h) }() //nolint:errcheck // ditto
			h.state = "released"
		}
	}
	held := 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := s.w.credit.Ledger.Hold(s.ctx, k.id, credit.Call{Model: "tts-1", Units: 1, Amount: 9_603})
			if err != nil {
				return
			}
			err = s.w.credit.Ledger.Settle(s.ctx, h)
			mu.Lock()
			defer mu.Unlock()
			held++
			k.spentEnded = k.spentEnded || k.ended
			if err == nil {
				k.settled += h.Amount
				k.holds = append(k.holds, &hold{h: h, state: "settled"})
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("key %s: %d calls at once, %d held", k.id, n, held), nil
}

func (s *sim) revokeKey() (string, error) {
	k, ok := one(s.rng, s.keys)
	if !ok {
		return "no key", nil
	}
	return "key " + k.id + ": " + outcome(s.w.credit.Keyring.Revoke(s.ctx, k.id)), nil
}

// providerEnds is the key's payment refunded at the provider's dashboard, or disputed by
// the buyer's bank, and its webhook: the key must never be spent again.
func (s *sim) providerEnds() (string, error) {
	k, ok := one(s.rng, s.keys)
	if !ok {
		return "no key", nil
	}
	calls, err := s.w.pay.RefundCalls(s.ctx, k.intent)
	if err != nil {
		return "", err
	}
	ev := orders.PaymentEvent{ID: fmt.Sprintf("evt_dispute_%d_%s", s.rng.IntN(1000), k.id), Type: stripe.EventChargeDisputeCreated,
		PaymentIntent: k.intent}
	if len(calls) == 0 && s.rng.IntN(2) == 0 {
		if err := s.w.pay.TestCheckout.Refund(s.ctx, k.intent, "dashboard-"+k.id); err != nil {
			return "", err
		}
		ev.ID, ev.Type = "evt_refunded_"+k.id, stripe.EventChargeRefunded
	}
	err = s.w.book.Cashier.HandleEvent(s.ctx, ev)
	if err == nil {
		k.ended = true
	}
	return fmt.Sprintf("key %s, %s: %s", k.id, ev.Type, outcome(err)), nil
}

func (s *sim) refundKey() (string, error) {
	k, ok := one(s.rng, s.keys)
	if !ok {
		return "no key", nil
	}
	return "key " + k.id + ": " + outcome(s.w.credit.Keyring.Refund(s.ctx, k.id)), nil
}
