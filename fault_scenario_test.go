package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"parla/providers/testkit"
)

// The frozen-node scenario of issue 29, as written there: default timeouts (heartbeat 2 s,
// dead after 10 s), a 25,000-character text-to-speech order on two nodes sharing Postgres
// and MinIO; the node running it is frozen (SIGSTOP) for 75 s while the other takes it
// over and delivers and the visitor presses "Delete now"; then it is resumed. It must end
// with one letter, no engine process started by the resumed node (at most one espeak-ng
// and one ffmpeg that were about to start), the deleted link answering 404 or 410 and no
// object of the order left in the bucket. The same again with the other node restarted
// during the freeze, and with Postgres restarted during the freeze.
//
// It takes about five minutes, so it runs only when asked (make fault-scenario):
//
//	PARLA_FAULT_SCENARIO=1 go test -count=1 -timeout 15m -run TestFrozenNodeScenario -v .
func TestFrozenNodeScenario(t *testing.T) {
	if os.Getenv("PARLA_FAULT_SCENARIO") == "" {
		t.Skip("minutes of wall time: PARLA_FAULT_SCENARIO=1 (make fault-scenario)")
	}
	requireMediaTools(t)
	fc := startFaultCluster(t, nil) // the default timeouts
	for _, variant := range []string{"freeze", "freeze+other-restart", "freeze+postgres-restart"} {
		t.Run(variant, func(t *testing.T) {
			fig := fc.frozenFor75s(t, variant)
			t.Logf("%s: %s", variant, fig)
		})
	}
}

// scenarioFigures are what one run of the scenario measured.
type scenarioFigures struct {
	freezeToTakeover, freezeToDelivery time.Duration
	processes                          map[string]int           // engine processes per node
	engine                             map[string]time.Duration // engine time per node
	late                               map[string]int           // per engine, started by the resumed node
	frozen                             string
}

func (f scenarioFigures) String() string {
	return fmt.Sprintf("frozen %s; freeze to takeover %s, freeze to delivery %s; engine processes per node %v, "+
		"engine time per node %v (the frozen node's is wasted); started by the resumed node %v", f.frozen,
		f.freezeToTakeover.Round(100*time.Millisecond), f.freezeToDelivery.Round(100*time.Millisecond),
		f.processes, f.engine, f.late)
}

// frozenFor75s plays the scenario once (variant: what else happens during the freeze) and
// checks its order.
func (fc *faultCluster) frozenFor75s(t *testing.T, variant string) scenarioFigures {
	c := fc.cluster
	c.t = t
	fc.resetTrace()
	h := c.at(0)
	sid, payURL := h.checkout(ttsOrder(longText(25_000), "nova", "mp3", 1, "frozen-"+variant+"@example.com", "en"))
	h.wantStatus(h.do("POST", c.on(0, payURL)+"/pay", "", nil, nil), 303)
	id := fc.one(`SELECT id FROM orders WHERE session_id = $1`, sid)
	victim := fc.runnerOf(t, id, fc.engineBusy)
	other := 1 - victim
	node := c.nodes[victim]

	// Mid-job: espeak-ng's pieces start together, so the first one ending is already well
	// into the job (a second later, the order was once done before the freeze).
	frozenAt := time.Now()
	fc.freezeNode(victim)
	if st := fc.one(`SELECT status FROM orders WHERE id = $1`, id); st != "processing" {
		t.Fatalf("order %s was %s when its node froze: the freeze came after the job", id, st)
	}
	switch variant {
	case "freeze+other-restart":
		time.Sleep(3 * time.Second)
		c.nodes[other].cmd.Process.Signal(syscall.SIGTERM)
		c.nodes[other].cmd.Wait()
		fc.restart(t, other)
	case "freeze+postgres-restart":
		time.Sleep(3 * time.Second)
		fc.pg.Down()
		time.Sleep(2 * time.Second)
		fc.pg.Up(t)
	}
	doneAt := fc.waitDone(t, id, 70*time.Second)
	fig := scenarioFigures{frozen: node.id, freezeToDelivery: doneAt.Sub(frozenAt)}
	if by := fc.one(`SELECT claimed_by FROM orders WHERE id = $1`, id); by != c.nodes[other].id {
		t.Errorf("order %s delivered by %q, want the other node %s", id, by, c.nodes[other].id)
	}
	fig.freezeToTakeover = fc.takenOverAt(id).Sub(frozenAt)
	token := fc.one(`SELECT COALESCE(link_token, '') FROM orders WHERE id = $1`, id)
	fc.deleteNow(t, other, id)
	time.Sleep(time.Until(frozenAt.Add(75 * time.Second)))
	resumedUp := sinceBoot()
	fc.resume(victim)
	time.Sleep(15 * time.Second) // the resumed node tries whatever it would
	fc.checkScenario(t, id, token, resumedUp, node.id, &fig)
	return fig
}

// takenOverAt is when the order's last job (a takeover inserts it again) was attempted:
// the takeover, once delivered by the other node; the database's clock is this machine's.
func (fc *faultCluster) takenOverAt(id string) time.Time {
	var ms int64
	fmt.Sscan(fc.one(`SELECT (extract(epoch from attempted_at) * 1000)::bigint::text FROM river_job
		WHERE kind = 'fulfil' AND args->>'order_id' = $1 ORDER BY id DESC LIMIT 1`, id), &ms)
	return time.UnixMilli(ms)
}

// checkScenario holds the deleted order to what the scenario promises, and fills in the
// engine figures.
func (fc *faultCluster) checkScenario(t *testing.T, id, token string, resumedUp time.Duration, frozen string, fig *scenarioFigures) {
	t.Helper()
	if n := fc.letters(id); n != 1 {
		t.Errorf("order %s: %d letters, want 1", id, n)
	}
	fig.processes, fig.engine, fig.late = map[string]int{}, map[string]time.Duration{}, map[string]int{}
	for _, p := range fc.traced() {
		fig.processes[p.node]++
		fig.engine[p.node] += p.end.Sub(p.start).Round(10 * time.Millisecond)
		if p.node == frozen && p.forked >= resumedUp.Truncate(10*time.Millisecond) {
			fig.late[p.engine]++
		}
	}
	for engine, n := range fig.late {
		if n > 1 {
			t.Errorf("order %s: the resumed node started %d %s processes, want at most the one about to start", id, n, engine)
		}
	}
	for i := range fc.nodes {
		if r := fc.at(i).get("/r/" + token); r.status != 404 && r.status != 410 {
			t.Errorf("order %s: the deleted link page answers %d on %s", id, r.status, fc.nodes[i].id)
		}
	}
	if key := fc.one(`SELECT result_key FROM orders WHERE id = $1`, id); key != "" {
		t.Errorf("order %s: a result key %q came back after delete now", id, key)
	}
	var left []string
	testkit.WaitFor(30*time.Second, func() bool { left = fc.objects("results/" + id + "/"); return len(left) == 0 })
	if len(left) != 0 {
		t.Errorf("order %s: objects left in the bucket after delete now: %v", id, left)
	}
}
