package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The fault suite's kinds that reach the exits of issue 44 ("every state has an exit"):
// a lost job row, which only the reconciler finds, and the operator's Retry pressed while
// the order's job runs. Both freeze the node running the order (fault, fault_test.go).

// faultReconcileInterval is the suite's RECONCILE_INTERVAL: the reconciler's passes come
// often enough for a lost job row to be found within a schedule.
const faultReconcileInterval = 2 * time.Second

// lostJobBound is how soon an order whose job row was lost is delivered: the reconciler's
// next pass (an interval), the new run's claim past the frozen runner's lease (the death
// timeout) and the order's production (a few seconds), with a wide margin for a busy CI.
// The passes are inserted by River's leader: when the frozen runner led, its leadership
// lapses first (riverLeadership; measured 3.4 s after the loss, 16.5 s when it led).
const lostJobBound = faultDeadAfter + 2*faultReconcileInterval + riverLeadership + 30*time.Second

// loseJob deletes the order's fulfilment job rows while its node is frozen, as a database
// restored from a backup or an operator's slip would: no takeover finds a running row,
// so only the reconciler's unqueued step can run the order again. It must be delivered
// within lostJobBound.
func (fc *faultCluster) loseJob(t *testing.T, s *schedule) {
	t.Helper()
	n := fc.one(`WITH gone AS (DELETE FROM river_job WHERE kind = 'fulfil' AND args->>'order_id' = $1 RETURNING 1)
		SELECT count(*)::text FROM gone`, s.id)
	s.fig.addNote(n + " job row(s) lost")
	s.doneAt = fc.waitDone(t, s.id, lostJobBound)
	s.fig.addNote(fmt.Sprintf("delivered %s after the loss", s.doneAt.Sub(s.faultAt).Round(10*time.Millisecond)))
}

// operatorRetries presses the operator's Retry (/admin, with ADMIN_TOKEN) on the other
// node at random moments while the order's runner is frozen and the other node takes it
// over: a Retry of an order that has not failed is refused (409), and the order ends with
// one delivery and no refund, never both (check).
func (fc *faultCluster) operatorRetries(t *testing.T, s *schedule, other int) {
	t.Helper()
	var answers []string
	for i := range 4 {
		time.Sleep(time.Duration(s.rng.IntN(1500)) * time.Millisecond)
		before, r := fc.retry(s, other, i)
		answers = append(answers, fmt.Sprintf("%d (%s)", r.status, before))
		if before != "failed" && r.status != 409 {
			t.Errorf("order %s: the operator's Retry of a %s order answered %d, want 409: %.200s", s.id, before, r.status, r.body)
		}
	}
	s.fig.addNote("operator's Retry answered " + strings.Join(answers, ", "))
}

// retry presses the operator's Retry of the schedule's order on node i (its n-th press,
// its once key) and returns the order's status just before, and the answer.
func (fc *faultCluster) retry(s *schedule, i, n int) (string, reply) {
	before := fc.one(`SELECT status FROM orders WHERE id = $1`, s.id)
	return before, fc.at(i).do("POST", "/admin/orders/"+s.id+"/retry", "", nil, map[string]string{
		"Authorization": "Bearer " + e2eAdminToken, "Accept": "application/json",
		"Idempotency-Key": fmt.Sprintf("fault-%d-retry-%d", s.seed, n)})
}
