package main

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

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
