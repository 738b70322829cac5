package moneysim

import (
	"context"
	"fmt"
	"time"

	"parla/api/orders"
	"parla/providers/testkit"
)

// Nodes dying: mid-call, mid-run, and between the payment and its job.

// killCalls is the node killed while its calls run: none of their holds is settled or
// released by the calls; the node restarts under a new process identity.
func (s *sim) killCalls() (string, error) {
	n := 0
	for _, k := range s.keys {
		for _, h := range k.holds {
			if h.state == "held" {
				h.state, n = "killed", n+1
			}
		}
	}
	if err := s.w.restart(time.Second); err != nil {
		return "", err
	}
	return fmt.Sprintf("the node died with %d calls held; restarted", n), nil
}

// killRun is the node killed while it produces an order, on its first attempt or its last
// (the engine failed the others): the engine works until the node's shutdown deadline
// cancels it, and a new process takes the node's place. A shutdown never gives an order
// up: with the engine healthy after, the order must be delivered.
func (s *sim) killRun() (string, error) {
	o, ok := one(s.rng, s.unpaidOrders())
	if !ok {
		return "no unpaid order", nil
	}
	failures := 0
	if s.rng.IntN(2) == 0 {
		failures = maxAttempts - 1
	}
	s.w.speaker.fault.set(failures, "down")
	s.w.speaker.fault.then(hang)
	o.healthy = true
	line, err := s.payNow(o)
	if err != nil || o.intent == "" {
		s.w.speaker.fault.set(0, "")
		return line, err
	}
	working := testkit.WaitEvery(time.Millisecond, 5*time.Second, s.w.speaker.hanging.Load)
	s.w.speaker.fault.set(0, "")
	if err := s.w.restart(100 * time.Millisecond); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s; killed while producing (%v, after %d failures); restarted", line, working, failures), nil
}

// payUnqueued is a node that died between recording an order's payment and queueing its
// job: the webhook is handled with the queue stopped, the job's row is lost, and the node
// restarts.
func (s *sim) payUnqueued() (string, error) {
	o, ok := one(s.rng, s.unpaidOrders())
	if !ok {
		return "no unpaid order", nil
	}
	if err := s.w.halt(time.Second); err != nil {
		return "", err
	}
	line, err := s.payNow(o)
	if err == nil {
		line += "; " + s.deleteJobs(o)
		err = s.w.start()
	}
	return line, err
}

// unpaidOrders are the orders not paid at the provider.
func (s *sim) unpaidOrders() []*order {
	var unpaid []*order
	for _, o := range s.orders {
		if o.intent == "" {
			unpaid = append(unpaid, o)
		}
	}
	return unpaid
}

// payAtProvider pays o's checkout at the provider and notes its payment; not paid, it says
// why (expired at the provider: nothing paid) or fails.
func (s *sim) payAtProvider(o *order) (bool, string, error) {
	if _, err := s.w.pay.Pay(s.ctx, o.session); err != nil {
		return false, o.id + ": " + outcome(err), nil
	}
	ts, err := s.w.pay.Get(s.ctx, o.session)
	if err != nil {
		return false, "", err
	}
	o.intent = ts.PaymentIntent
	return true, "", nil
}

// payNow pays o at the provider and delivers its webhook.
func (s *sim) payNow(o *order) (string, error) {
	if paid, msg, err := s.payAtProvider(o); !paid {
		return msg, err
	}
	return o.id + " paid, webhook: " + outcome(s.webhook(o, "evt_"+o.session)), nil
}

// deleteJobs deletes the order's job rows, as a lost insert or a lost row leaves it.
func (s *sim) deleteJobs(o *order) string {
	res, err := s.w.db.ExecContext(context.WithoutCancel(s.ctx), `DELETE FROM river_job WHERE kind IN ('fulfil', 'refund') AND `+
		s.w.db.Dialect.JSONText("args", "order_id")+` = ?`, o.id)
	if err != nil {
		return "deleting its jobs: " + err.Error()
	}
	n, _ := res.RowsAffected()
	return fmt.Sprintf("%d job rows deleted", n)
}

// raceOperator is the operator acting on an order while its give-up's refund job runs: the
// engine fails every attempt, and the moment the order is failed the operator's Refund or
// Retry is clicked, racing the job at the provider and on the order's row.
func (s *sim) raceOperator() (string, error) {
	o, ok := one(s.rng, s.unpaidOrders())
	if !ok {
		return "no unpaid order", nil
	}
	retry := s.rng.IntN(2) == 0
	s.w.speaker.fault.set(maxAttempts, "down")
	line, err := s.payNow(o)
	if err != nil || o.intent == "" {
		return line, err
	}
	failed := testkit.WaitEvery(time.Millisecond, 5*time.Second, func() bool {
		got, err := s.w.book.Operator().Get(s.ctx, o.id)
		return err == nil && got.Status == orders.Failed
	})
	if !failed {
		return line + "; never failed", nil
	}
	if retry {
		_, err = s.w.book.Operator().Retry(s.ctx, s.actor(), o.id)
		return line + "; failed, the operator's retry at once: " + outcome(err), nil
	}
	_, err = s.w.book.Operator().Refund(s.ctx, s.actor(), o.id)
	return line + "; failed, the operator's refund at once: " + outcome(err), nil
}
