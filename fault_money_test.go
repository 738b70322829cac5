package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"parla/providers/testkit"
)

// The fault suite's kinds on the money beyond an order's charge: an API call's hold whose
// node is killed under it (api-kill).

// apiHoldBound is how soon a killed node's hold is given back by the survivor: the dead
// process stops being live after NODE_DEAD_AFTER, the reconciler's next pass releases what
// it held; 10 s of margin for a busy CI. The reconciler's passes are inserted by River's
// leader: when the killed node led, the survivor is elected first, River's leadership
// lapsing in riverLeadership (measured: released 18.2 s to 20.5 s after the leader's kill).
const (
	apiHoldBound    = faultDeadAfter + faultReconcileInterval + 10*time.Second
	riverLeadership = 20 * time.Second
)

// apiKill buys API credit on a node, makes one transcription that settles, then one the
// stand-in engine holds for ten minutes, and kills the node (-9) while it holds the call's
// price: the survivor's reconciler releases the hold within apiHoldBound (and River's
// leadership, in the suite's second round, whose victim is the leader), and the key's
// balance is what it bought less what it settled, nothing held.
func (fc *faultCluster) apiKill(t *testing.T, s *schedule) {
	leader := fc.one(`SELECT COALESCE((SELECT leader_id FROM river_leader LIMIT 1), '')`)
	s.victim = fc.index(t, leader)
	bound := apiHoldBound + riverLeadership
	if (s.seed-1)/uint64(len(faultKinds))%2 == 0 {
		s.victim, bound = 1-s.victim, apiHoldBound
	}
	base := fc.nodes[s.victim].base
	secret := buyCreditFrom(t, base, 500)
	key := fc.one(`SELECT id FROM credit_keys ORDER BY created_at DESC LIMIT 1`)
	bought := fc.one(`SELECT balance::text FROM credit_keys WHERE id = $1`, key)
	body, ctype := transcriptionForm(t, fc.clip(), "model", "whisper-1")
	if status := transcribe(base, secret, body, ctype); status != 200 {
		t.Fatalf("the first API call answered %d", status)
	}
	fc.stt.delay.Store(int64(10 * time.Minute))
	go transcribe(base, secret, body, ctype) // answered never: its node is killed under it
	if !testkit.WaitFor(30*time.Second, func() bool {
		return fc.one(`SELECT count(*)::text FROM credit_calls WHERE key_id = $1 AND state = 'held'`, key) == "1"
	}) {
		t.Fatalf("key %s: the second call never held its price", key)
	}
	s.faultAt = time.Now()
	fc.kill(s.victim)
	if !testkit.WaitFor(bound, func() bool {
		return fc.one(`SELECT count(*)::text FROM credit_calls WHERE key_id = $1 AND state = 'held'`, key) == "0"
	}) {
		t.Fatalf("key %s: the killed node's hold still held %s after the kill", key, bound)
	}
	s.doneAt = time.Now()
	s.fig.deathToDone = s.doneAt.Sub(s.faultAt)
	s.fig.addNote(fmt.Sprintf("hold released %s after %s's kill (River's leader: %s)", s.fig.deathToDone.Round(10*time.Millisecond), fc.nodes[s.victim].id, leader))
	money := fc.one(`SELECT k.balance || ' ' || k.held || ' ' || COALESCE((SELECT sum(amount) FROM credit_calls
		WHERE key_id = k.id AND state = 'settled'), 0) || ' ' || (k.balance + k.held + COALESCE((SELECT sum(amount)
		FROM credit_calls WHERE key_id = k.id AND state = 'settled'), 0))::text FROM credit_keys k WHERE k.id = $1`, key)
	var balance, held, settled, total int64
	fmt.Sscan(money, &balance, &held, &settled, &total)
	if held != 0 || settled <= 0 || fmt.Sprint(total) != bought {
		t.Errorf("key %s: balance %d, held %d, settled %d: want nothing held, one call settled and balance + settled = %s bought",
			key, balance, held, settled, bought)
	}
}

// clip is a 20-second recording for the API's transcriptions, made once.
func (fc *faultCluster) clip() string {
	if fc.apiClip == "" {
		fc.apiClip = paddedMP3(fc.top, 20)
	}
	return fc.apiClip
}

// transcribe posts a transcription to the API with a key and answers its status (0: no
// answer).
func transcribe(base, secret string, body []byte, ctype string) int {
	req, _ := http.NewRequest("POST", base+"/v1/audio/transcriptions", bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// providerOutage is how long the payment provider is down in provider-down: the refund job
// meets it on several tries (the doubling retry from FULFIL_RETRY_BASE, 100 ms), and its
// next try after the outage comes within about as long again. Two minutes, as issue 44
// puts it, would cost the suite four; a shorter outage crosses the same states.
const providerOutage = 8 * time.Second

// providerDown orders a text whose engine fails (failMark), so that the order is given up
// and refunded, with the payment provider down meanwhile: refusing every refund (a
// trigger on the test checkout's refund calls: not recorded, certainly not refunded) or,
// in the suite's second round, hanging (the table locked) until providerOutage after the
// order failed, the operator pressing Retry meanwhile. The refund happens once, later:
// within 2 × providerOutage + 30 s of the provider's return, with one refund letter
// (check).
func (fc *faultCluster) providerDown(t *testing.T, s *schedule) {
	up := fc.refuseRefunds(t)
	if (s.seed-1)/uint64(len(faultKinds))%2 == 1 {
		up()
		up = fc.hangRefunds(t)
	}
	defer up()
	s.id = fc.place(t, s, failMark+" ")
	if !testkit.WaitFor(60*time.Second, func() bool {
		st := fc.one(`SELECT status FROM orders WHERE id = $1`, s.id)
		return st != "paid" && st != "processing"
	}) {
		t.Fatalf("order %s never failed", s.id)
	}
	// The operator, seeing a failed order whose refund does not go through, presses Retry
	// while the refund job works: refused (409) while its refund is running or went out,
	// else run again, to fail again; either way, one refund in the end, never a delivery.
	pressed := time.Duration(s.rng.IntN(int(providerOutage / time.Millisecond / 2)))
	time.Sleep(pressed * time.Millisecond)
	before, r := fc.retry(s, s.rng.IntN(len(fc.nodes)), 0)
	s.fig.addNote(fmt.Sprintf("the operator's Retry of the %s order answered %d", before, r.status))
	if r.status == 200 {
		s.retried++
	} else if r.status != 409 {
		t.Errorf("order %s: the operator's Retry answered %d: %.200s", s.id, r.status, r.body)
	}
	time.Sleep(providerOutage - pressed*time.Millisecond)
	if st := fc.one(`SELECT status FROM orders WHERE id = $1`, s.id); st == "refunded" || st == "done" {
		t.Errorf("order %s %s while the payment provider was down", s.id, st)
	}
	up()
	s.faultAt = time.Now()
	s.doneAt = fc.waitDone(t, s.id, 2*providerOutage+30*time.Second)
	s.fig.addNote(fmt.Sprintf("refunded %s after the provider came back", s.doneAt.Sub(s.faultAt).Round(10*time.Millisecond)))
}

// refuseRefunds makes the test checkout refuse every refund (its call not recorded) until
// the function it returns is called.
func (fc *faultCluster) refuseRefunds(t *testing.T) (up func()) {
	t.Helper()
	fc.one(`CREATE OR REPLACE FUNCTION fault_provider_down() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'the payment provider is down'; END $$`)
	fc.one(`CREATE TRIGGER fault_provider_down BEFORE INSERT ON test_checkout_refund_calls
		FOR EACH ROW EXECUTE FUNCTION fault_provider_down()`)
	return func() { fc.one(`DROP TRIGGER IF EXISTS fault_provider_down ON test_checkout_refund_calls`) }
}

// hangRefunds makes every refund at the test checkout wait (its calls' table locked) until
// the function it returns is called.
func (fc *faultCluster) hangRefunds(t *testing.T) (up func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fc.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, `LOCK TABLE test_checkout_refund_calls IN ACCESS EXCLUSIVE MODE`)
	}
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		tx.Rollback(ctx)
		conn.Close(ctx)
	}
}
