package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

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

// freezeNode stops node i and its engine processes; resume continues them.
func (fc *faultCluster) freezeNode(i int) {
	syscall.Kill(-fc.nodes[i].cmd.Process.Pid, syscall.SIGSTOP)
}
func (fc *faultCluster) resume(i int) {
	os.Remove(fc.freeze + ".taken") // a node frozen at a step waits for it to go (freezeAt)
	if n := fc.nodes[i]; n.cmd.ProcessState == nil {
		syscall.Kill(-n.cmd.Process.Pid, syscall.SIGCONT)
	}
}

// resumeVictim resumes the schedule's victim and records when: on the wall clock and on
// the clock of the kernel's process start times.
func (fc *faultCluster) resumeVictim(s *schedule) {
	s.resumedUp = sinceBoot()
	fc.resume(s.victim)
	s.resumedAt = time.Now()
}

// sinceBoot is this machine's uptime (/proc/uptime, in hundredths of a second), the clock of
// a process's start time in /proc/PID/stat.
func sinceBoot() time.Duration {
	data, _ := os.ReadFile("/proc/uptime")
	up, _ := strconv.ParseFloat(strings.Fields(string(data) + " 0")[0], 64)
	return time.Duration(up * float64(time.Second))
}

// kill kills node i and its engine processes (-9), as a host losing its power would.
func (fc *faultCluster) kill(i int) {
	n := fc.nodes[i]
	syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	n.cmd.Wait()
}

// restart starts node i again under its id, living as long as the suite.
func (fc *faultCluster) restart(t testing.TB, i int) {
	fc.cluster.t = fc.top
	fc.cluster.start(fc.nodes[i])
	fc.cluster.t = t
}

// frozen reports whether node i is stopped (SIGSTOP).
func (fc *faultCluster) frozen(i int) bool { return processState(fc.nodes[i].cmd.Process.Pid) == "T" }

// processState is a process's state letter in /proc/PID/stat (T stopped, Z a zombie), ""
// when it is gone.
func processState(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// "pid (comm) state …": comm may hold spaces and parentheses.
	if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 {
		return f[0]
	}
	return ""
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
	s.fig.addNote(fmt.Sprintf("%s, %d letter(s), jobs %s", strings.TrimSpace(status), n, fc.checkJobs(t, id, refunded)))
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
// winner's, and the refund's — none running, retryable, cancelled or discarded; and its
// runs stay within the attempt limit unless it was given up. It returns the jobs (kind,
// state and attempt) and the runs.
func (fc *faultCluster) checkJobs(t *testing.T, id string, refunded bool) string {
	t.Helper()
	var states string
	testkit.WaitFor(10*time.Second, func() bool { // a refund job may be finishing
		states = fc.one(`SELECT COALESCE(string_agg(kind || '#' || id || ':' || state || '@' || attempt, ' ' ORDER BY id), '')
			FROM river_job WHERE args->>'order_id' = $1`, id)
		return !strings.Contains(states, ":running") && !strings.Contains(states, ":available") && !strings.Contains(states, ":retryable")
	})
	for _, job := range strings.Fields(states) {
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

// runnerOf waits for the order's job to be running on a node that busy says works on it
// and returns the node's index.
func (fc *faultCluster) runnerOf(t *testing.T, id string, busy func(node string) bool) int {
	t.Helper()
	var runner string
	if !testkit.WaitFor(60*time.Second, func() bool {
		runner = fc.one(`SELECT COALESCE(attempted_by[array_length(attempted_by, 1)], '') FROM river_job
			WHERE kind = 'fulfil' AND args->>'order_id' = $1 AND state = 'running'`, id)
		return runner != "" && busy(runner)
	}) {
		t.Fatalf("order %s never ran", id)
	}
	return fc.index(t, runner)
}

// anyNode is runnerOf's busy for a fault at any moment of the job: the node running it is
// the one.
func anyNode(string) bool { return true }

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

// engineBusy reports whether node ran an engine process in this schedule.
func (fc *faultCluster) engineBusy(node string) bool { return fc.processesOf(node, time.Time{}) > 0 }

// index is the index of the node named id.
func (fc *faultCluster) index(t *testing.T, id string) int {
	t.Helper()
	for i, n := range fc.nodes {
		if n.id == id {
			return i
		}
	}
	t.Fatalf("no node %q", id)
	return 0
}

// one runs a query for one text value.
func (fc *faultCluster) one(q string, args ...any) string {
	fc.t.Helper()
	var err error
	for range 50 { // Postgres may be restarting
		var out []string
		if out, err = fc.tryQuery(q, args...); err == nil {
			if len(out) == 0 {
				return ""
			}
			return out[0]
		}
		time.Sleep(200 * time.Millisecond)
	}
	fc.t.Fatalf("the database did not answer %q: %v", q, err)
	return ""
}

// tryQuery is cluster.query that answers an error while the database is away.
func (fc *faultCluster) tryQuery(q string, args ...any) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fc.dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// waitDone waits for the order to be done (or refunded) and returns when it was.
func (fc *faultCluster) waitDone(t *testing.T, id string, within time.Duration) time.Time {
	t.Helper()
	var status string
	if !testkit.WaitFor(within, func() bool {
		status = fc.one(`SELECT status FROM orders WHERE id = $1`, id)
		return status == "done" || status == "refunded" || status == "expired"
	}) {
		t.Fatalf("order %s still %s", id, status)
	}
	return time.Now()
}

// delivered waits for the schedule's order to end and records when, with what it
// delivered (recordServed): called before a frozen loser resumes, so that a loser
// replacing the delivered bytes is seen.
func (fc *faultCluster) delivered(t *testing.T, s *schedule) {
	t.Helper()
	s.doneAt = fc.waitDone(t, s.id, 120*time.Second)
	fc.recordServed(t, s)
}

// recordServed records the key of the result the order serves, and its bytes' digest.
func (fc *faultCluster) recordServed(t *testing.T, s *schedule) {
	t.Helper()
	if s.served = fc.one(`SELECT result_key FROM orders WHERE id = $1`, s.id); s.served != "" {
		s.before = fc.digest(t, s.served)
	}
}

// deleteNow presses "Delete now" on node i's link page of the order.
func (fc *faultCluster) deleteNow(t *testing.T, i int, id string) {
	t.Helper()
	fc.deleteLink(t, i, "/r/"+fc.one(`SELECT COALESCE(link_token, '') FROM orders WHERE id = $1`, id))
}

// deleteLink presses "Delete now" on node i's link page (/r/TOKEN).
func (fc *faultCluster) deleteLink(t *testing.T, i int, page string) {
	t.Helper()
	h := fc.at(i)
	r := h.do("POST", page+"/delete", "application/x-www-form-urlencoded", []byte("confirm=yes"),
		withHeaders(browser, "Sec-Fetch-Site", "same-origin"))
	h.wantStatus(r, 200)
}

// digest is the SHA-256 of an object in the bucket.
func (fc *faultCluster) digest(t *testing.T, key string) [32]byte {
	t.Helper()
	mc, err := minio.New(fc.minio.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(fc.minio.AccessKey, fc.minio.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := mc.GetObject(context.Background(), fc.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Errorf("reading %s: %v", key, err)
	}
	return sha256.Sum256(b)
}

// letters counts the letters sent for an order (its delivery's and its refund's).
func (fc *faultCluster) letters(id string) int {
	n := 0
	for _, m := range fc.smtp.Messages() {
		if bytes.Contains(m.Data, []byte("parla."+id+".delivered")) || bytes.Contains(m.Data, []byte("parla."+id+".refunded")) {
			n++
		}
	}
	return n
}

// traced reads the engine trace: node, engine, start, end.
type tracedProcess struct {
	node, engine string
	start, end   time.Time
	forked       time.Duration // the kernel's start time: since boot, to a clock tick (10 ms)
}

func (fc *faultCluster) traced() []tracedProcess {
	data, _ := os.ReadFile(fc.trace)
	var out []tracedProcess
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 {
			continue
		}
		s, _ := strconv.ParseInt(f[2], 10, 64)
		e, _ := strconv.ParseInt(f[3], 10, 64)
		ticks, _ := strconv.ParseInt(f[4], 10, 64)
		out = append(out, tracedProcess{node: f[0], engine: f[1], start: time.Unix(0, s), end: time.Unix(0, e),
			forked: time.Duration(ticks) * 10 * time.Millisecond})
	}
	return out
}

// processesOf counts the engine processes node started after since (and ended).
func (fc *faultCluster) processesOf(node string, since time.Time) int {
	n := 0
	for _, p := range fc.traced() {
		if p.node == node && p.start.After(since) {
			n++
		}
	}
	return n
}

// forkedSince returns the engine processes node forked at up (the uptime of sinceBoot) or
// later: a process forked before a freeze and stopped by it before it read the clock does
// not count, its start as the wrapper saw it notwithstanding.
func (fc *faultCluster) forkedSince(node string, up time.Duration) []tracedProcess {
	var out []tracedProcess
	for _, p := range fc.traced() {
		if p.node == node && p.forked >= up.Truncate(10*time.Millisecond) {
			out = append(out, p)
		}
	}
	return out
}

// describeLate lists processes forked after up, for a failure's message.
func describeLate(ps []tracedProcess, up time.Duration) string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s forked +%s (ran %s)", p.engine, p.forked-up.Truncate(10*time.Millisecond), p.end.Sub(p.start).Round(time.Millisecond)))
	}
	return strings.Join(out, ", ")
}

// engineTime is the engine time node spent in this schedule.
func (fc *faultCluster) engineTime(node string) time.Duration {
	var d time.Duration
	for _, p := range fc.traced() {
		if p.node == node {
			d += p.end.Sub(p.start)
		}
	}
	return d
}

func (fc *faultCluster) resetTrace() { os.Remove(fc.trace) }

// reportFigures logs the suite's figures: its time, fault to delivery and wasted engine time.
func reportFigures(t *testing.T, figs []faultFigures) {
	if len(figs) == 0 {
		return
	}
	var total, wasted, took time.Duration
	n := 0
	for _, f := range figs {
		took += f.took
		if f.takenOver {
			total += f.deathToDone
			wasted += f.wastedEngine
			n++
		}
	}
	if n == 0 {
		t.Logf("%d schedules in %s, no takeover", len(figs), took.Round(100*time.Millisecond))
		return
	}
	t.Logf("%d schedules in %s, %d takeovers: mean fault to delivery %s, mean engine time wasted per takeover %s",
		len(figs), took.Round(100*time.Millisecond), n, (total / time.Duration(n)).Round(10*time.Millisecond),
		(wasted / time.Duration(n)).Round(10*time.Millisecond))
}
