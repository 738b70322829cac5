package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
)

// The fault suite: nodes of a cluster (real processes on Postgres + MinIO, each leading
// its own process group with its engine processes) under seeded schedules of faults, as
// Jepsen or FoundationDB's simulation do it at our size. Each schedule places one small
// text-to-speech order and plays one kind of fault on it (faultKinds; the seed chooses the
// kind and the timings):
//
//   - freeze the node running it, engines and all (SIGSTOP to its process group), past the
//     death timeout and until the other node delivered; the same with "Delete now" pressed
//     meanwhile, or with Postgres restarted meanwhile, or with the order's job row lost
//     (only the reconciler can run it again, RECONCILE_INTERVAL), or with the operator's
//     Retry pressed meanwhile (fault_exits_test.go); or resumed while the other node is
//     still producing (its first letter then meets a 451, to its recipient or at the end
//     of its data);
//   - freeze it at a chosen point: at an engine process's start (past the gate), at the
//     letter (claimed, nothing sent), after the letter was sent and before it is recorded,
//     or at another fulfilment step (PARLA_TEST_FREEZE_FILE, main_test.go);
//   - kill it (-9, its engines too) and restart it after the death timeout, or 0.5 s later
//     under the same NODE_ID with the other node frozen meanwhile (delivered within 90 s);
//   - an SMTP server that confirms the letter's data later than the node waits, or hangs up
//     after it;
//   - a poison order whose engine kills its node each time (FULFIL_MAX_ATTEMPTS=3): given
//     up and refunded, the nodes brought back up each time as a supervisor would;
//   - an OpenAI-compatible speech server (a stand-in, one address per node) with the node
//     frozen between its calls;
//   - a node killed -9 while it holds an API call's price (fault_money_test.go): the
//     survivor's reconciler gives the hold back, and the key keeps what it bought less what
//     it settled; the payment provider down (refusing, or hanging) while a failed order's
//     refund is due: refunded once, after;
//   - Postgres restarted in the middle of the commit of the letter's claim, the stored
//     result, the refund mark or an API call's settle (fault_commit_test.go).
//
// A checker then holds the order to what "exactly once" promises (check):
//
//   - one letter (the delivery's, or the refund's), never two; where the node froze holding
//     the letter's claim before sending, none only while that claim stays taken (its fate
//     unknown, the operator's Resend);
//   - one charge, and one refund exactly when the order was refunded, with its reason: at
//     the provider, every refund call counted (the test checkout's refund calls), asked
//     under one idempotency key at most;
//   - every River job of the order completed: none left running, retryable or cancelled
//     on the winner's row; its runs within the attempt limit unless given up;
//   - a done order serves a result, and the delivered bytes never replaced (the served key and its bytes' digest, taken at
//     delivery before a frozen loser resumes, and at the end);
//   - a deleted result never readable again (the link page 404/410, no object left);
//   - no engine process or call started by a node after it lost the order: at most the
//     ones about to start, forked within lateWindow of its resume;
//   - a fault at a random moment came while the order was still to be produced (paid, or
//     processing below 100 %: faultedMidRun), or the schedule proves nothing and fails;
//   - of the visitor's transcript saves (fault_edits_test.go), none lost: the one served
//     was sent after every other accepted save was answered.
//
// The heartbeat and the death timeout are short (NODE_HEARTBEAT, NODE_DEAD_AFTER) so the
// schedules fit in CI's minutes. A failure names its seed; PARLA_FAULT_SEED=n replays
// that one schedule. Engine processes are traced by wrappers on PATH (the real espeak-ng
// and ffmpeg, run after a short delay that stretches the job over the faults).
//
//	go test -count=1 -run TestFaultSchedules -v .                    # the seeded schedules
//	PARLA_FAULT_SEED=7 go test -count=1 -run TestFaultSchedules -v . # replay one (or 7,21: some)
func TestFaultSchedules(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite runs real nodes for minutes")
	}
	var seeds []uint64
	for s := range uint64(faultSchedules) {
		seeds = append(seeds, s+1)
	}
	if list := os.Getenv("PARLA_FAULT_SEED"); list != "" {
		seeds = nil
		for _, s := range strings.Split(list, ",") {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("PARLA_FAULT_SEED=%q: %v", list, err)
			}
			seeds = append(seeds, n)
		}
	}
	requireMediaTools(t)
	fc := startFaultCluster(t, map[string]string{
		"NODE_HEARTBEAT": faultHeartbeat.String(), "NODE_DEAD_AFTER": faultDeadAfter.String(),
		"RECONCILE_INTERVAL": faultReconcileInterval.String(), "ADMIN_TOKEN": e2eAdminToken,
	})
	var figures []faultFigures
	for _, seed := range seeds {
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			started := time.Now()
			fig := fc.run(t, seed)
			fig.took = time.Since(started)
			figures = append(figures, fig)
			t.Logf("seed %d: %s", seed, fig)
		})
		if !ok {
			t.Errorf("schedule failed; replay it with PARLA_FAULT_SEED=%d", seed)
		}
	}
	reportFigures(t, figures)
}

// The suite's timing: beats every 250 ms, dead after 1.5 s; each engine process waits
// engineDelay first, so a small order's job lasts several seconds. A node waits
// smtpTimeout for each answer of the SMTP server; the attempt limit is faultMaxAttempts.
const (
	faultHeartbeat   = 250 * time.Millisecond
	faultDeadAfter   = 1500 * time.Millisecond
	engineDelay      = "0.4"
	smtpTimeout      = 3 * time.Second
	faultMaxAttempts = 3
	faultSchedules   = 40 // seeds 1…40: each kind twice
)

// faultKinds are the kinds of fault a schedule plays; seed n plays kind (n-1) mod len.
var faultKinds = []string{
	"freeze", "freeze+delete", "kill-restart", "freeze+postgres-restart", "resume-mid-winner",
	"freeze@gate", "freeze@letter", "freeze@sent", "freeze@step", "smtp-late", "smtp-hangup",
	"poison", "same-id-restart", "openai-freeze", "freeze+lost-job", "freeze+operator-retry",
	"api-kill", "provider-down", "postgres@order", "postgres@money",
}

// faultCluster is a cluster whose Postgres the suite may restart, whose engine processes
// are traced and whose speech server (for Spanish) is an OpenAI-compatible stand-in.
type faultCluster struct {
	*cluster
	pg     *testkit.PostgresServer
	trace  string
	freeze string // the file that arms a freeze (PARLA_TEST_FREEZE_FILE)
	speech *speechRelay
	stt    *fakeOpenAI // the API's transcriptions (and the site's): a stand-in that may hold them
	// apiClip is the recording the API's calls send (clip)
	apiClip string
	top     testing.TB // the suite's test: a restarted node lives as long as it
}

// startFaultCluster starts two nodes whose engine processes are traced, each leading its
// own process group, with timing (the NODE_HEARTBEAT and NODE_DEAD_AFTER env; none: the
// defaults, 2 s and 10 s).
func startFaultCluster(t *testing.T, timing map[string]string) *faultCluster {
	t.Helper()
	dir := t.TempDir()
	fc := &faultCluster{trace: filepath.Join(dir, "engines.trace"), freeze: filepath.Join(dir, "freeze"), top: t}
	bin := filepath.Join(dir, "bin")
	fc.engineWrappers(t, bin)
	fc.pg = testkit.StartPostgres(t)
	fc.speech = startSpeechRelay(t)
	fc.stt = startFakeOpenAI(t)
	env := map[string]string{"WORKERS": "1", "PATH": bin + ":" + os.Getenv("PATH"),
		"FULFIL_MAX_ATTEMPTS": strconv.Itoa(faultMaxAttempts), "PARLA_TEST_FREEZE_FILE": fc.freeze}
	for k, v := range fc.speech.env() {
		env[k] = v
	}
	for k, v := range fc.stt.env() {
		env[k] = v
	}
	for k, v := range timing {
		env[k] = v
	}
	// setsid: the node leads a process group of its own, which its engines join, so
	// that a freeze or a kill takes them all, as it would a container.
	fc.cluster = startClusterOn(t, fc.pg, 2, clusterSetup{env: env, prefix: `exec setsid "$0" #`,
		smtp: []testkit.SMTPOption{testkit.SMTPClientTimeout(smtpTimeout)}})
	return fc
}

// engineWrappers writes espeak-ng and ffmpeg wrappers into bin: each waits engineDelay,
// freezes its node's process group when the freeze file says "gate" (it is past the
// gate, about to run; stopped again after a stray SIGCONT until the suite resumes it, as
// freezeAt), kills it (-9) when its input holds poisonMark (espeak-ng reads its text on
// standard input), fails when it holds failMark, runs the real engine and traces it.
func (fc *faultCluster) engineWrappers(t *testing.T, bin string) {
	t.Helper()
	os.MkdirAll(bin, 0o755)
	for _, name := range []string{"espeak-ng", "ffmpeg"} {
		real, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s: %v", name, err)
		}
		run := fmt.Sprintf("%q \"$@\"", real)
		if name == "espeak-ng" {
			run = fmt.Sprintf("input=$(cat)\ncase \"$input\" in *%s*) kill -KILL -$PPID; exit 137;; *%s*) exit 1;; esac\n"+
				"printf '%%s' \"$input\" | %q \"$@\"", poisonMark, failMark, real)
		}
		// One line per process, written when it ends: node, engine, start and end (ns), and
		// the kernel's start time (clock ticks since boot: when the node forked it, even if
		// a freeze stopped it before it could read the clock).
		script := fmt.Sprintf("#!/bin/sh\nstart=$(date +%%s%%N)\n"+
			"read -r _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ forked _ < /proc/$$/stat\nsleep %s\n"+
			"if [ \"$(cat %q 2>/dev/null)\" = gate ] && mv %q %q.taken 2>/dev/null; then\n"+
			"  while [ -e %q.taken ]; do kill -STOP -$PPID; sleep 0.01; done\nfi\n"+
			"%s\nrc=$?\necho \"$NODE_ID %s $start $(date +%%s%%N) $forked\" >> %q\nexit $rc\n",
			engineDelay, fc.freeze, fc.freeze, fc.freeze, fc.freeze, run, name, fc.trace)
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// poisonMark in an order's text makes the espeak-ng wrapper kill the node reading it;
// failMark makes it fail (exit 1), so that the order is given up and refunded.
const (
	poisonMark = "POISON-PILL"
	failMark   = "ENGINE-FAILS"
)

// faultFigures are what one schedule measured.
type faultFigures struct {
	seed          uint64
	kind          string
	takenOver     bool          // the order was delivered by the other node
	deathToDone   time.Duration // from the fault to the order done (0: no takeover)
	wastedEngine  time.Duration // engine time of the node that lost the order
	lateProcesses int           // processes (or speech calls) it started after it was resumed
	note          string        // what the kind adds (crashes, letters, which save won)
	took          time.Duration // the schedule's wall time
}

// addNote adds to what the kind saw.
func (f *faultFigures) addNote(note string) {
	if note != "" && f.note != "" {
		f.note += "; "
	}
	f.note += note
}

func (f faultFigures) String() string {
	s := fmt.Sprintf("%s (%s): ", f.kind, f.took.Round(100*time.Millisecond))
	if !f.takenOver {
		s += fmt.Sprintf("no takeover, done %s after the fault", f.deathToDone.Round(10*time.Millisecond))
	} else {
		s += fmt.Sprintf("taken over; fault to delivery %s, engine time wasted %s, processes started after resuming %d",
			f.deathToDone.Round(10*time.Millisecond), f.wastedEngine.Round(10*time.Millisecond), f.lateProcesses)
	}
	if f.note != "" {
		s += "; " + f.note
	}
	return s
}

// schedule is one schedule's order and what its fault did.
type schedule struct {
	seed      uint64
	rng       *rand.Rand
	kind      string
	id        string           // the order
	victim    int              // the node the fault hit, -1: none
	edits     *scheduleEdits   // the visitor's transcript saves, nil when the kind makes none
	faultAt   time.Time        // when the fault hit
	doneAt    time.Time        // when the order was done (zero: not waited for by the fault)
	resumedAt time.Time        // when the victim ran again (zero: it was killed, or not hit)
	resumedUp time.Duration    // the machine's uptime then (sinceBoot), the clock of a fork
	letters   func(n int) bool // the letters the kind allows (nil: exactly one)
	retried   int              // the operator's Retries accepted (each cancels a refund job)
	served    string           // the delivered result's key, read at delivery ("": none)
	before    [32]byte         // its bytes' digest then, before any loser resumed
	fig       faultFigures
}

// run plays the schedule of seed and checks its order.
func (fc *faultCluster) run(t *testing.T, seed uint64) faultFigures {
	c := fc.cluster
	c.t = t
	s := &schedule{seed: seed, rng: rand.New(rand.NewPCG(seed, 29)), kind: faultKinds[(seed-1)%uint64(len(faultKinds))], victim: -1}
	s.fig = faultFigures{seed: seed, kind: s.kind}
	defer fc.reset()
	switch s.kind {
	case "freeze", "freeze+delete", "kill-restart", "freeze+postgres-restart", "resume-mid-winner":
		s.edits = fc.transcriptToEdit(t, seed)
	}
	fc.resetTrace()
	switch s.kind {
	case "poison":
		fc.poison(t, s)
	case "smtp-late", "smtp-hangup":
		fc.slowSMTP(t, s)
	case "openai-freeze":
		fc.openAIFreeze(t, s)
	case "freeze@letter", "freeze@sent", "freeze@step", "freeze@gate":
		fc.frozenAt(t, s)
	case "same-id-restart":
		fc.sameIDRestart(t, s)
	case "provider-down":
		fc.providerDown(t, s)
	case "postgres@order":
		fc.postgresMidCommit(t, s)
	case "postgres@money":
		if fc.postgresMidCommit(t, s); s.id == "" {
			return s.fig // an API call: the key's money was checked
		}
	case "api-kill":
		fc.apiKill(t, s)
		return s.fig // no order: the key's money is checked
	default:
		s.id = fc.place(t, s, "")
		s.victim = fc.runnerOf(t, s.id, anyNode)
		// Somewhere mid-job: its engine processes start 0.4 s after the claim (engineDelay)
		// and all end about 2 s after it, so a fault later than the first one's end (the
		// suite's first choice) often found the order done and proved nothing.
		time.Sleep(time.Duration(s.rng.IntN(800)) * time.Millisecond)
		fc.fault(t, s)
	}
	return fc.settle(t, s)
}

// place orders a text-to-speech of a few thousand characters and pays it: English
// (espeak-ng's three or four pieces) after extra, or Spanish when extra is "es" (the
// OpenAI-compatible stand-in's five or six calls); it returns the order's id.
func (fc *faultCluster) place(t *testing.T, s *schedule, extra string) string {
	return fc.placeArmed(t, s, extra, nil)
}

// placeArmed is place calling arm (when not nil) with the order's id before paying.
func (fc *faultCluster) placeArmed(t *testing.T, s *schedule, extra string, arm func(id string)) string {
	t.Helper()
	c := fc.cluster
	entry := s.rng.IntN(len(c.nodes))
	h := c.at(entry)
	text := strings.Repeat(fmt.Sprintf("Schedule %d says a few words, then a few more. ", s.seed), 90+s.rng.IntN(30)) // 4,700–6,300 characters
	if extra == "es" {
		text = strings.Repeat(spanishParagraph, 180+s.rng.IntN(60)) // 16,700–22,200 characters: five or six calls
	} else {
		text = extra + text
	}
	sid, payURL := h.checkout(ttsOrder(text, "nova", "mp3", 1, fmt.Sprintf("fault-%d@example.com", s.seed), "en"))
	id := fc.one(`SELECT id FROM orders WHERE session_id = $1`, sid)
	if arm != nil {
		arm(id)
	}
	h.wantStatus(h.do("POST", c.on(entry, payURL)+"/pay", "", nil, nil), 303)
	return id
}

// settle waits for the order's end, gives a resumed node time to try everything it would,
// checks the order and returns the schedule's figures.
func (fc *faultCluster) settle(t *testing.T, s *schedule) faultFigures {
	if s.doneAt.IsZero() {
		fc.delivered(t, s)
	} else if s.served == "" {
		fc.recordServed(t, s)
	}
	s.fig.deathToDone = s.doneAt.Sub(s.faultAt)
	var node *clusterNode
	if s.victim >= 0 {
		node = fc.nodes[s.victim]
		s.fig.takenOver = fc.one(`SELECT claimed_by FROM orders WHERE id = $1`, s.id) != node.id
	}
	if s.edits != nil {
		s.edits.wg.Wait()
	}
	if !s.resumedAt.IsZero() {
		time.Sleep(2 * faultDeadAfter) // the resumed node tries everything it would
	}
	fc.check(t, s)
	if s.edits != nil {
		s.fig.addNote(fc.checkEdits(t, s.edits, s.kind == "freeze+delete"))
	}
	if node != nil && !s.resumedAt.IsZero() {
		fc.checkLate(t, s, node.id)
	}
	if node != nil {
		s.fig.wastedEngine = fc.engineTime(node.id)
	}
	return s.fig
}

// reset brings the cluster back to its usual self after a schedule: the SMTP server
// behaving, no freeze armed, every node running and up.
func (fc *faultCluster) reset() {
	fc.smtp.Calm()
	fc.stt.delay.Store(0)
	os.Remove(fc.freeze)
	for i, n := range fc.nodes {
		if fc.dead(i) {
			n.cmd.Wait()
			fc.restart(fc.top, i)
		}
		fc.resume(i)
	}
	fc.resetTrace()
}

// fault plays the schedule's fault on the node running the order (s.victim), and saves
// the visitor's edit at the worst moments: on the frozen node (the request waits in its
// socket and is handled when it resumes) and on the other node, racing the takeover; with
// "Delete now", a burst of saves racing it. It records when the other node delivered
// (not waited for after a kill) and when the victim runs again.
func (fc *faultCluster) fault(t *testing.T, s *schedule) {
	rng, e := s.rng, s.edits
	victim, other := s.victim, 1-s.victim
	s.faultAt = time.Now()
	if s.kind == "kill-restart" {
		fc.kill(s.victim)
		fc.faultedMidRun(t, s)
		fc.save(e, other)
		time.Sleep(faultDeadAfter + time.Duration(rng.IntN(1000))*time.Millisecond)
		fc.restart(t, s.victim)
		return
	}
	fc.freezeNode(victim)
	fc.faultedMidRun(t, s)
	fc.save(e, victim)
	fc.save(e, other)
	switch s.kind {
	case "freeze+postgres-restart":
		time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
		fc.pg.Down()
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		fc.pg.Up(t)
	case "resume-mid-winner":
		fc.resumeMidWinner(t, s)
		return
	case "freeze+lost-job":
		fc.loseJob(t, s)
	case "freeze+operator-retry":
		fc.operatorRetries(t, s, other)
	}
	// Frozen until the other node delivered, and longer: as a long GC pause would.
	fc.delivered(t, s)
	if s.kind == "freeze+delete" {
		fc.deleteNow(t, other, s.id)
		// Saves 3 ms apart from before the delete to after it: some record their edit
		// just before the mark and write the file just after the delete listed the files.
		deleteAt := 10 + rng.IntN(40)
		// Each over whichever came before (If-Match: *): the deletion is what is checked.
		for i := range 20 {
			fc.saveAfter(e, other, time.Duration(i*3)*time.Millisecond, "*")
		}
		time.Sleep(time.Duration(deleteAt) * time.Millisecond)
		fc.deleteLink(t, other, e.page)
	}
	time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
	fc.resumeVictim(s)
}

// resumeMidWinner resumes the frozen victim while the other node, having taken the order
// over, is still producing it, and has the SMTP server refuse the next letter once (451 to
// its recipient, or at the end of its data), as a blip would: the winner must retry it on its own job, whatever the loser's outcome.
func (fc *faultCluster) resumeMidWinner(t *testing.T, s *schedule) {
	other := fc.nodes[1-s.victim].id
	if !testkit.WaitFor(60*time.Second, func() bool {
		return fc.one(`SELECT claimed_by FROM orders WHERE id = $1`, s.id) == other && fc.processesOf(other, s.faultAt) > 0
	}) {
		t.Fatalf("order %s: %s did not take it over and start producing", s.id, other)
	}
	// The refusal: of its recipient, or (the suite's second round) of the letter's data at
	// its end, certainly not delivered: the letter must be sent again, once.
	refusal := testkit.SMTPRefuseRcpt
	if (s.seed-1)/uint64(len(faultKinds))%2 == 1 {
		refusal = testkit.SMTPTryLaterAfterData
		s.fig.addNote("451 at the end of the data")
	}
	fc.smtp.Script(refusal)
	status := fc.one(`SELECT status FROM orders WHERE id = $1`, s.id)
	fc.resumeVictim(s)
	s.fig.addNote("resumed while the winner's order was " + status)
	if status != "processing" {
		t.Errorf("order %s was %s when the loser was resumed: the winner was not producing any more (a larger text?)", s.id, status)
	}
}
