package moneysim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"parla/api/orders"
	"parla/providers/stripe"
)

// action is one kind of step: do takes it and says what it did. An error of the product
// (a refusal, a failed call) is the step's outcome, logged; do fails only when the
// simulation itself cannot go on.
type action struct {
	name   string
	weight int
	do     func(s *sim) (string, error)
}

// menu is what a step may be, weighted. A node frozen past its lease and resumed is not in
// it yet (the fault suite in the root package freezes real processes).
var menu = []action{
	{"order", 8, (*sim).newOrder},
	{"pay", 8, (*sim).payOrder},
	{"webhook", 4, (*sim).webhookAgain},
	{"lookup", 3, (*sim).lookup},
	{"engine", 3, (*sim).engineFault},
	{"payfault", 3, (*sim).paymentsFault},
	{"mailfault", 2, (*sim).mailFault},
	{"retry", 3, (*sim).operatorRetry},
	{"refund", 3, (*sim).operatorRefund},
	{"losejob", 2, (*sim).loseJob},
	{"race", 2, (*sim).raceOperator},
	{"clock", 4, (*sim).clockJump},
	{"buy", 4, (*sim).buyKey},
	{"hold", 8, (*sim).holdCall},
	{"settle", 6, (*sim).settleCall},
	{"release", 3, (*sim).releaseCall},
	{"killcalls", 2, (*sim).killCalls},
	{"killrun", 2, (*sim).killRun},
	{"unqueued", 2, (*sim).payUnqueued},
	{"late", 2, (*sim).lateEnd},
	{"burst", 2, (*sim).burst},
	{"revoke", 1, (*sim).revokeKey},
	{"keyrefund", 2, (*sim).refundKey},
	{"provider", 1, (*sim).providerEnds},
}

func pick(rng *rand.Rand) action {
	total := 0
	for _, a := range menu {
		total += a.weight
	}
	n := rng.IntN(total)
	for _, a := range menu {
		if n < a.weight {
			return a
		}
		n -= a.weight
	}
	panic("unreachable")
}

// one picks one of xs at random; ok is false when there is none.
func one[T any](rng *rand.Rand, xs []T) (x T, ok bool) {
	if len(xs) == 0 {
		return x, false
	}
	return xs[rng.IntN(len(xs))], true
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return "error: " + err.Error()
}

func (s *sim) newOrder() (string, error) {
	co, err := s.w.book.Desk.CreateTTS(s.ctx, orders.TTSRequest{
		Params: orders.TTSParams{Voice: "nova", Format: "mp3", Speed: 1, Text: strings.Repeat("Hola. ", 1+s.rng.IntN(20))},
		Email:  "visitor@example.com", EmailVerify: "visitor@example.com", Locale: "es",
	})
	if err != nil {
		return "", fmt.Errorf("ordering: %w", err)
	}
	s.orders = append(s.orders, &order{id: co.OrderID, session: co.SessionID})
	return co.OrderID, nil
}

// payOrder pays an order at the provider; its news comes by the webhook, the confirmation
// page, or not yet (a late webhook: another step, or the end).
func (s *sim) payOrder() (string, error) {
	o, ok := one(s.rng, s.unpaidOrders())
	if !ok {
		return "no unpaid order", nil
	}
	if paid, msg, err := s.payAtProvider(o); !paid {
		return msg, err
	}
	switch s.rng.IntN(4) {
	case 0, 1:
		return o.id + " paid, webhook: " + outcome(s.webhook(o, "evt_"+o.session)), nil
	case 2:
		return o.id + " paid, confirmation page: " + outcome(s.lookupOrder(o)), nil
	}
	return o.id + " paid, no news yet", nil
}

// webhook tells the book the order's session completed, under event id. Handled, it is not
// owed any more: the provider retries only a webhook that failed.
func (s *sim) webhook(o *order, id string) error {
	session, err := s.w.pay.GetCheckout(s.ctx, o.session)
	if err != nil {
		return err
	}
	err = s.w.book.Cashier.HandleEvent(s.ctx, orders.PaymentEvent{ID: id, Type: stripe.EventCheckoutCompleted, Session: session})
	o.told = o.told || err == nil && o.intent != ""
	return err
}

// lookupOrder is the confirmation page asking after the order: once it answered for a
// paid order, the book knows it paid.
func (s *sim) lookupOrder(o *order) error {
	_, err := s.w.book.Cashier.Lookup(s.ctx, orders.TTS, o.session)
	o.told = o.told || err == nil && o.intent != ""
	return err
}

// paidOrders are the orders paid at the provider.
func (s *sim) paidOrders() []*order {
	var paid []*order
	for _, o := range s.orders {
		if o.intent != "" {
			paid = append(paid, o)
		}
	}
	return paid
}

// webhookAgain delivers a paid order's webhook again: the same event (a retry) or another
// one (Stripe may send several), perhaps long after.
func (s *sim) webhookAgain() (string, error) {
	o, ok := one(s.rng, s.paidOrders())
	if !ok {
		return "no paid order", nil
	}
	id := "evt_" + o.session
	if s.rng.IntN(2) == 0 {
		id = fmt.Sprintf("evt_%d_%s", s.rng.IntN(1000), o.session)
	}
	return o.id + " " + id + ": " + outcome(s.webhook(o, id)), nil
}

func (s *sim) lookup() (string, error) {
	o, ok := one(s.rng, s.orders)
	if !ok {
		return "no order", nil
	}
	return o.id + ": " + outcome(s.lookupOrder(o)), nil
}

var faultKinds = []string{refused, unknownBefore, unknownAfter}

func (s *sim) engineFault() (string, error) {
	n := s.rng.IntN(maxAttempts + 2)
	s.w.speaker.fault.set(n, "down")
	return fmt.Sprintf("the engine fails its next %d calls", n), nil
}

func (s *sim) paymentsFault() (string, error) {
	n, kind := 1+s.rng.IntN(maxAttempts+1), faultKinds[s.rng.IntN(len(faultKinds))]
	s.w.pay.fault.set(n, kind)
	return fmt.Sprintf("the provider's next %d refunds: %s", n, kind), nil
}

func (s *sim) mailFault() (string, error) {
	n, kind := 1+s.rng.IntN(3), faultKinds[s.rng.IntN(len(faultKinds))]
	s.w.mail.fault.set(n, kind)
	return fmt.Sprintf("the mail server's next %d letters: %s", n, kind), nil
}

// actor is the operator, each action once.
func (s *sim) actor() orders.Actor {
	return orders.Actor{Who: "sim", IP: "192.0.2.1", Once: fmt.Sprintf("sim-%d-%d", s.seed, len(s.log))}
}

func (s *sim) operatorRetry() (string, error) {
	o, ok := one(s.rng, s.paidOrders())
	if !ok {
		return "no paid order", nil
	}
	_, err := s.w.book.Operator().Retry(s.ctx, s.actor(), o.id)
	return o.id + ": " + outcome(err), nil
}

func (s *sim) operatorRefund() (string, error) {
	o, ok := one(s.rng, s.paidOrders())
	if !ok {
		return "no paid order", nil
	}
	before, err := s.w.book.Operator().Get(s.ctx, o.id)
	if err != nil {
		return "", err
	}
	_, err = s.w.book.Operator().Refund(s.ctx, s.actor(), o.id)
	if before.Status == orders.Done || before.Status == orders.Expired {
		// Asked to refund it delivered: both, by the operator's will (even when the
		// provider's answer was lost and the order still says done).
		o.refundedDone = true
	}
	return fmt.Sprintf("%s (%s): %s", o.id, before.Status, outcome(err)), nil
}

// loseJob deletes a paid order's job rows, whatever they are doing: a lost row.
func (s *sim) loseJob() (string, error) {
	o, ok := one(s.rng, s.paidOrders())
	if !ok {
		return "no paid order", nil
	}
	return o.id + ": " + s.deleteJobs(o), nil
}

var jumps = []time.Duration{time.Minute, 20 * time.Minute, 2 * time.Hour, 3 * time.Hour}

// clockJump moves the simulated clock on, then sweeps and reconciles, as the periodic
// jobs would in that time.
func (s *sim) clockJump() (string, error) {
	d := jumps[s.rng.IntN(len(jumps))]
	s.w.clock.advance(d)
	return fmt.Sprintf("+%s, %s", d, s.w.periodic(s.ctx)), nil
}
