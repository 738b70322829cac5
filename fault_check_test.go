package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
)

// The fault suite's checker (fault_test.go's comment): what "exactly once" promises of a
// schedule's order, its money and its jobs, and of the node that lost it.

// lateWindow bounds when a resumed node may still start an engine process or call: only
// one that passed its process gate before the freeze, forked (or sent) at once when the
// node runs again. The gate's last word is the node's own lease (fulfil.go's gate), so a
// gate asked after the resume refuses; but nothing can close the step between a gate's
// yes and the fork, so one such process per engine worker (or a call) may still come.
const lateWindow = time.Second

// checkLate holds the node that lost the order (resumed) to starting nothing after it
// came back: at most the processes of each engine that were about to start (an espeak-ng
// and an ffmpeg; for the OpenAI-compatible engine one call), and none later than
// lateWindow after the resume, which only a gate asked after it could have let through.
func (fc *faultCluster) checkLate(t *testing.T, s *schedule, node string) {
	t.Helper()
	late, most := len(fc.forkedSince(node, s.resumedUp)), 2
	after := len(fc.forkedSince(node, s.resumedUp+lateWindow))
	if s.kind == "openai-freeze" {
		late, most = fc.speech.callsOf(node, s.resumedAt), 1
		after = fc.speech.callsOf(node, s.resumedAt.Add(lateWindow))
	}
	s.fig.lateProcesses = late
	if late > 0 && s.kind != "openai-freeze" {
		s.fig.addNote("late: " + describeLate(fc.forkedSince(node, s.resumedUp), s.resumedUp))
	}
	if late > most || after > 0 {
		t.Errorf("order %s: node %s started %d engine processes or calls after it was resumed (%d of them over %s after), want at most %d, none after: %s",
			s.id, node, late, after, lateWindow, most, describeLate(fc.forkedSince(node, s.resumedUp), s.resumedUp))
	}
}

// check holds the order to what "exactly once" promises (the suite's comment): its end,
// its letter, its money, its jobs, the delivered bytes kept (s.served and s.before: the key
// and its digest at delivery), and a deleted result gone.
func (fc *faultCluster) check(t *testing.T, s *schedule) {
	t.Helper()
	id := s.id
	status := fc.one(`SELECT status || ' ' || error FROM orders WHERE id = $1`, id)
	if status != "done " && status != "expired " && !strings.HasPrefix(status, "refunded ") {
		t.Errorf("order %s ended %q", id, status)
	}
	refunded := strings.HasPrefix(status, "refunded ")
	if refunded && strings.TrimSpace(strings.TrimPrefix(status, "refunded")) == "" {
		t.Errorf("order %s refunded without a reason", id)
	}
	allowed := s.letters
	if allowed == nil {
		allowed = func(n int) bool { return n == 1 }
	}
	n := fc.letters(id)
	if !allowed(n) {
		t.Errorf("order %s (%s): %d letters; %s", id, strings.TrimSpace(status), n, fc.one(`SELECT 'letter claimed '
			|| (mail_claimed_at <> 0)::text || ', recorded as sent ' || (mailed_at <> 0)::text FROM orders WHERE id = $1`, id))
	}
	if n == 0 {
		s.fig.addNote("no letter: " + fc.one(`SELECT 'mail claimed ' || (mail_claimed_at <> 0)::text || ', mailed ' || (mailed_at <> 0)::text
			FROM orders WHERE id = $1`, id))
	}
	fc.checkMoney(t, id, refunded)
	s.fig.addNote(fmt.Sprintf("%s, %d letter(s), jobs %s", strings.TrimSpace(status), n, fc.checkJobs(t, s, refunded)))
	if s.kind != "freeze+delete" {
		if status == "done " && s.served == "" {
			t.Errorf("order %s done without a result", id)
		}
		if s.served != "" {
			if now := fc.one(`SELECT result_key FROM orders WHERE id = $1`, id); now != s.served || fc.digest(t, now) != s.before {
				t.Errorf("order %s: the delivered result was replaced (%s → %s)", id, s.served, now)
			}
		}
		return
	}
	if left := fc.objects("results/" + id + "/"); len(left) != 0 {
		t.Errorf("order %s: objects left after delete now: %v", id, left)
	}
	token := fc.one(`SELECT COALESCE(link_token, '') FROM orders WHERE id = $1`, id)
	for i, n := range fc.nodes {
		if r := fc.at(i).get("/r/" + token); r.status != 404 && r.status != 410 {
			t.Errorf("order %s: the deleted link answers %d on %s", id, r.status, n.id)
		}
	}
	if key := fc.one(`SELECT result_key FROM orders WHERE id = $1`, id); key != "" {
		t.Errorf("order %s: a result key %q came back after delete now", id, key)
	}
}

// checkMoney: one paid checkout session for the order, and one refund at the provider
// (the test checkout's refunds) exactly when it was refunded.
func (fc *faultCluster) checkMoney(t *testing.T, id string, refunded bool) {
	t.Helper()
	if paid := fc.one(`SELECT count(*)::text FROM test_checkout_sessions WHERE order_id = $1 AND payment_status = 'paid'`, id); paid != "1" {
		t.Errorf("order %s: %s paid checkout sessions, want 1", id, paid)
	}
	want := "0"
	if refunded {
		want = "1"
	}
	if n := fc.one(`SELECT count(*)::text FROM test_checkout_refunds r JOIN orders o ON o.payment_intent = r.payment_intent
		WHERE o.id = $1`, id); n != want {
		t.Errorf("order %s: %s refunds at the provider, want %s", id, n, want)
	}
	// Every call that reached the provider, whatever it answered (a second refund under
	// another key is refused there, ErrRefundedTwice, so the table above cannot show it).
	if keys := fc.one(`SELECT count(DISTINCT c.idempotency_key)::text FROM test_checkout_refund_calls c
		JOIN orders o ON o.payment_intent = c.payment_intent WHERE o.id = $1`, id); keys != want {
		t.Errorf("order %s: refunds asked under %s idempotency keys, want %s (%s)", id, keys, want,
			fc.one(`SELECT count(*)::text || ' calls' FROM test_checkout_refund_calls c JOIN orders o ON o.payment_intent = c.payment_intent WHERE o.id = $1`, id))
	}
}

// checkJobs: every River job of the order ends completed — the takeovers' rows, the
// winner's, and the refund's — none running, retryable, cancelled or discarded, but for
// the refund job of each Retry the operator's was accepted for (Retry cancels it); and its
// runs stay within the attempt limit unless it was given up. It returns the jobs (kind,
// state and attempt) and the runs.
func (fc *faultCluster) checkJobs(t *testing.T, s *schedule, refunded bool) string {
	t.Helper()
	id, cancelled := s.id, 0
	var states string
	testkit.WaitFor(10*time.Second, func() bool { // a refund job may be finishing
		states = fc.one(`SELECT COALESCE(string_agg(kind || '#' || id || ':' || state || '@' || attempt, ' ' ORDER BY id), '')
			FROM river_job WHERE args->>'order_id' = $1`, id)
		return !strings.Contains(states, ":running") && !strings.Contains(states, ":available") && !strings.Contains(states, ":retryable")
	})
	for _, job := range strings.Fields(states) {
		if strings.HasPrefix(job, "refund#") && strings.Contains(job, ":cancelled@") && cancelled < s.retried {
			cancelled++
			continue
		}
		if !strings.Contains(job, ":completed@") {
			t.Errorf("order %s: job %s not completed (all: %s)", id, job, states)
		}
	}
	var runs int
	fmt.Sscan(fc.one(`SELECT runs::text FROM orders WHERE id = $1`, id), &runs)
	if !refunded && runs > faultMaxAttempts {
		t.Errorf("order %s: %d runs, over the limit of %d, and not given up", id, runs, faultMaxAttempts)
	}
	return fmt.Sprintf("%s, %d runs", regexp.MustCompile(`#\d+`).ReplaceAllString(states, ""), runs)
}

// faultedMidRun checks that the fault came while the order was still the victim's to
// finish (paid: its job running, its claim not yet taken; processing): a fault after it
// was done proves nothing of the kind's promise.
func (fc *faultCluster) faultedMidRun(t *testing.T, s *schedule) {
	t.Helper()
	at := fc.one(`SELECT status || ' at ' || progress::text || '%' FROM orders WHERE id = $1`, s.id)
	s.fig.addNote("faulted " + at)
	if !midRun(at) {
		t.Errorf("order %s was %s when its node was faulted: the schedule proves nothing (seed %d)", s.id, at, s.seed)
	}
}

// midRun reports whether an order in state at ("STATUS at N%") was still to be produced:
// paid (its node faulted before its claim) or processing below 100 % (at 100 % its
// production is over: only its letter and done are left, no takeover's work to prove).
func midRun(at string) bool {
	return strings.HasPrefix(at, "paid ") || strings.HasPrefix(at, "processing ") && at != "processing at 100%"
}

// TestFaultMidRun: a fault proves a takeover's promise only while the order is still to be
// produced; at 100 % only its letter is left (issue 44: faultedMidRun accepted it).
func TestFaultMidRun(t *testing.T) {
	for at, want := range map[string]bool{"paid at 0%": true, "processing at 0%": true, "processing at 99%": true,
		"processing at 100%": false, "done at 100%": false, "refunded at 0%": false} {
		if got := midRun(at); got != want {
			t.Errorf("midRun(%q) = %v, want %v", at, got, want)
		}
	}
}
