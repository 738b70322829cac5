package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers/testkit"
)

// The fault suite's kinds beyond a freeze or a kill at a random moment (fault_test.go):
// freezes at chosen points, a misbehaving SMTP server, a poison order, a same-id restart
// and an OpenAI-compatible engine under a freeze.

// frozenAt freezes the node running the order at a chosen point: at its first engine
// process (past the gate; espeak-ng's pieces all start within the job's first second, so
// a later one would find none left to start), at the letter (claimed, the SMTP server greeted, nothing
// sent), after the letter was sent and before it is recorded, or at another fulfilment
// step; then, as a freeze does, until the other node delivered.
func (fc *faultCluster) frozenAt(t *testing.T, s *schedule) {
	arm := func(id string) {
		step := map[string]string{"freeze@gate": "gate", "freeze@sent": id + " sent"}[s.kind]
		switch s.kind {
		case "freeze@step":
			step = id + " " + []string{"producing", "stored", "mailed"}[s.rng.IntN(3)]
		case "freeze@letter":
			// The node that claimed the letter and says EHLO is the order's runner.
			fc.smtp.OnHello(func() {
				if by, err := fc.tryQuery(`SELECT claimed_by FROM orders WHERE id = $1`, id); err == nil && len(by) == 1 {
					for i, n := range fc.nodes {
						if n.id == by[0] {
							fc.freezeNode(i)
						}
					}
				}
			})
			// Its letter's fate is unknown to the winner: at most one; none only while its
			// claim stays taken (the fate unknown: the operator's Resend), since a claim given
			// back says it certainly was not sent, and a done order's letter then never is.
			s.letters = func(n int) bool {
				return n == 1 || n == 0 && fc.one(`SELECT (mail_claimed_at <> 0)::text FROM orders WHERE id = $1`, id) == "true"
			}
			return
		}
		s.fig.addNote("frozen at " + strings.TrimPrefix(step, id+" "))
		if err := os.WriteFile(fc.freeze, []byte(step), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.id = fc.placeArmed(t, s, "", arm)
	if !testkit.WaitFor(60*time.Second, func() bool {
		for i := range fc.nodes {
			if fc.frozen(i) {
				s.victim = i
				return true
			}
		}
		return false
	}) {
		t.Fatalf("order %s: no node froze at %s", s.id, s.kind)
	}
	s.faultAt = time.Now()
	fc.delivered(t, s)
	hold := time.Duration(s.rng.IntN(1500)) * time.Millisecond
	if s.kind == "freeze@letter" && (s.seed-1)/uint64(len(faultKinds))%2 == 1 {
		// Past the node's SMTP timeout: resumed, its session has lapsed before the data.
		hold = smtpTimeout + time.Second
		s.fig.addNote("held past the SMTP timeout")
	}
	time.Sleep(hold)
	fc.resumeVictim(s)
}

// slowSMTP has the SMTP server confirm the letter's data later than the node waits (only
// when the suite ends), or hang up after it: the letter has left, so it must not be sent
// again.
func (fc *faultCluster) slowSMTP(t *testing.T, s *schedule) {
	fault := testkit.SMTPAnswerLate // when the suite ends
	if s.kind == "smtp-hangup" {
		fault = testkit.SMTPHangUpAfterData
	}
	fc.smtp.Script(fault)
	s.id = fc.place(t, s, "")
	s.faultAt = time.Now()
	s.doneAt = fc.waitDone(t, s.id, 120*time.Second)
	time.Sleep(smtpTimeout) // a letter sent again would be stored by now
}

// poison orders a text whose engine kills its node each time (the espeak-ng wrapper's
// poisonMark), bringing every node that dies back up as a supervisor would: after
// FULFIL_MAX_ATTEMPTS crashes it must be given up (production_failed) and refunded, once.
func (fc *faultCluster) poison(t *testing.T, s *schedule) {
	s.id = fc.place(t, s, poisonMark+" ")
	s.faultAt = time.Now()
	crashes := 0
	if !testkit.WaitFor(150*time.Second, func() bool {
		for i, n := range fc.nodes {
			if fc.dead(i) {
				n.cmd.Wait()
				crashes++
				fc.restart(t, i)
			}
		}
		// Failed is on the way: the give-up's refund job refunds it next.
		st := fc.one(`SELECT status FROM orders WHERE id = $1`, s.id)
		return st != "processing" && st != "paid" && st != "failed"
	}) {
		t.Fatalf("order %s still %s after %d node crashes", s.id, fc.one(`SELECT status FROM orders WHERE id = $1`, s.id), crashes)
	}
	s.doneAt = time.Now()
	s.fig.addNote(fmt.Sprintf("%d node crashes", crashes))
	if st := fc.one(`SELECT status || ' ' || error FROM orders WHERE id = $1`, s.id); st != "refunded production_failed" {
		t.Errorf("order %s ended %q, want refunded production_failed", s.id, st)
	}
	if crashes != faultMaxAttempts {
		t.Errorf("order %s took %d nodes down, want %d (FULFIL_MAX_ATTEMPTS)", s.id, crashes, faultMaxAttempts)
	}
	if runs := fc.one(`SELECT runs::text FROM orders WHERE id = $1`, s.id); runs != fmt.Sprint(faultMaxAttempts+1) {
		t.Errorf("order %s: %s runs, want %d (the crashed ones and the one that gave it up)", s.id, runs, faultMaxAttempts+1)
	}
	for i, n := range fc.nodes {
		if fc.dead(i) || fc.at(i).get("/healthz").status != 200 {
			t.Errorf("%s is not back up", n.id)
		}
	}
}

// dead reports whether node i's process ended (a zombie not yet waited for, or gone).
func (fc *faultCluster) dead(i int) bool {
	n := fc.nodes[i]
	if n.cmd.ProcessState != nil {
		return true
	}
	st := processState(n.cmd.Process.Pid)
	return st == "" || st == "Z"
}

// sameIDRestart kills the node running the order (-9) and starts it again 0.5 s later
// under the same NODE_ID, the other node frozen meanwhile so that only the restarted one
// can deliver: it must take its old job over at once and deliver within 90 s.
func (fc *faultCluster) sameIDRestart(t *testing.T, s *schedule) {
	s.id = fc.place(t, s, "")
	s.victim = fc.runnerOf(t, s.id, anyNode)
	time.Sleep(time.Duration(s.rng.IntN(800)) * time.Millisecond) // mid-job, as fault's kinds
	other := 1 - s.victim
	s.faultAt = time.Now()
	fc.kill(s.victim)
	fc.faultedMidRun(t, s)
	fc.freezeNode(other)
	time.Sleep(500 * time.Millisecond)
	fc.restart(t, s.victim)
	ok := testkit.WaitFor(time.Until(s.faultAt.Add(90*time.Second)), func() bool {
		return fc.one(`SELECT status FROM orders WHERE id = $1`, s.id) == "done"
	})
	s.doneAt = time.Now()
	fc.resume(other)
	if !ok {
		t.Errorf("order %s not delivered within 90 s of its node's same-id restart: %s", s.id,
			fc.one(`SELECT status || ' ' || progress::text || '% claimed by ' || claimed_by FROM orders WHERE id = $1`, s.id))
	}
	if by := fc.one(`SELECT claimed_by FROM orders WHERE id = $1`, s.id); by != fc.nodes[s.victim].id {
		t.Errorf("order %s delivered by %q, want the restarted %s", s.id, by, fc.nodes[s.victim].id)
	}
	s.victim = -1 // the restarted node is the winner: nothing of it to hold back
}

// openAIFreeze orders Spanish speech, which the OpenAI-compatible stand-in reads (one call
// of up to 4,096 characters after another), and freezes the node between or during its
// calls until the other node delivered: the resumed node makes no call after.
func (fc *faultCluster) openAIFreeze(t *testing.T, s *schedule) {
	s.id = fc.place(t, s, "es")
	s.victim = fc.runnerOf(t, s.id, func(node string) bool { return fc.speech.callsOf(node, time.Time{}) > 0 })
	time.Sleep(time.Duration(s.rng.IntN(800)) * time.Millisecond)
	fc.fault(t, s)
}

// speechRelay is an OpenAI-compatible speech server (Kokoro's stand-in) each node reaches
// under its own path (/NODE_ID/v1), so that it knows who called when; each speech call
// takes speechCallDelay more, as a slow model would.
type speechRelay struct {
	*httptest.Server
	kokoro *kokoroStandIn
	mu     sync.Mutex
	calls  []speechCall
}

type speechCall struct {
	node string
	at   time.Time
}

const speechCallDelay = time.Second

func startSpeechRelay(t testing.TB) *speechRelay {
	r := &speechRelay{kokoro: startKokoro(t)}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *speechRelay) serve(w http.ResponseWriter, req *http.Request) {
	node, rest, _ := strings.Cut(strings.TrimPrefix(req.URL.Path, "/"), "/")
	req.URL.Path = "/" + rest
	if rest == "v1/audio/speech" {
		r.mu.Lock()
		r.calls = append(r.calls, speechCall{node: node, at: time.Now()})
		r.mu.Unlock()
		time.Sleep(speechCallDelay)
	}
	r.kokoro.serve(w, req)
}

// env sends Spanish to the stand-in (every other language to espeak-ng), each node under
// its path.
func (r *speechRelay) env() map[string]string {
	return map[string]string{"TTS_ENGINE": "openai,espeak", "OPENAI_TTS_BASE_URL": r.URL + "/{NODE_ID}/v1",
		"OPENAI_TTS_MODEL": "kokoro", "OPENAI_TTS_API_KEY": "none", "OPENAI_TTS_LANGUAGES": "es"}
}

// callsOf counts the speech calls node made after since.
func (r *speechRelay) callsOf(node string, since time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c.node == node && c.at.After(since) {
			n++
		}
	}
	return n
}
