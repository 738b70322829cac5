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

// The fault suite: nodes of a cluster (real processes on Postgres + MinIO) under seeded
// schedules of faults, as Jepsen or FoundationDB's simulation do it at our size. Each
// schedule places one small text-to-speech order and, while it is produced, freezes the
// node running it past the death timeout (SIGSTOP … SIGCONT), or kills it (-9) and restarts
// it, sometimes restarting Postgres meanwhile, and sometimes presses "Delete now" as soon as
// the other node delivered, while the frozen one is still out. A checker then holds the
// order to what "exactly once" promises:
//
//   - one letter (the delivery's, or the refund's with its reason), never two;
//   - one charge, or one refund with its reason;
//   - the delivered bytes never replaced (the served key and its bytes, at delivery and at
//     the end);
//   - a deleted result never readable again (the link page 404/410, no object left);
//   - no engine process started by a node after it lost the order (its lease lapsed): at
//     most one espeak-ng and one ffmpeg that were about to start.
//
// The heartbeat and the death timeout are short (NODE_HEARTBEAT, NODE_DEAD_AFTER) so ten
// schedules fit in CI's minutes. A failure names its seed; PARLA_FAULT_SEED=n replays
// that one schedule. Engine processes are traced by wrappers on PATH (the real espeak-ng
// and ffmpeg, run after a short delay that stretches the job over the faults).
//
//	go test -count=1 -run TestFaultSchedules -v .                   # ten seeded schedules
//	PARLA_FAULT_SEED=7 go test -count=1 -run TestFaultSchedules -v . # replay one
func TestFaultSchedules(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite runs real nodes for minutes")
	}
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if s := os.Getenv("PARLA_FAULT_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PARLA_FAULT_SEED=%q: %v", s, err)
		}
		seeds = []uint64{n}
	}
	requireMediaTools(t)
	fc := startFaultCluster(t, map[string]string{
		"NODE_HEARTBEAT": faultHeartbeat.String(), "NODE_DEAD_AFTER": faultDeadAfter.String(),
	})
	var figures []faultFigures
	for _, seed := range seeds {
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			fig := fc.run(t, seed)
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
// engineDelay first, so a small order's job lasts several seconds.
const (
	faultHeartbeat = 250 * time.Millisecond
	faultDeadAfter = 1500 * time.Millisecond
	engineDelay    = "0.4"
)

// faultCluster is a cluster whose Postgres the suite may restart and whose engine
// processes are traced.
type faultCluster struct {
	*cluster
	pg    *testkit.PostgresServer
	trace string
	top   testing.TB // the suite's test: a restarted node lives as long as it
}

// startFaultCluster starts two nodes whose engine processes are traced, with timing (the
// NODE_HEARTBEAT and NODE_DEAD_AFTER env; none: the defaults, 2 s and 10 s).
func startFaultCluster(t *testing.T, timing map[string]string) *faultCluster {
	t.Helper()
	dir := t.TempDir()
	trace := filepath.Join(dir, "engines.trace")
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	for _, name := range []string{"espeak-ng", "ffmpeg"} {
		real, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s: %v", name, err)
		}
		// One line per process, written when it ends: node, engine, start and end (ns).
		script := fmt.Sprintf("#!/bin/sh\nstart=$(date +%%s%%N)\nsleep %s\n%q \"$@\"\nrc=$?\n"+
			"echo \"$NODE_ID %s $start $(date +%%s%%N)\" >> %q\nexit $rc\n", engineDelay, real, name, trace)
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pg := testkit.StartPostgres(t)
	env := map[string]string{"WORKERS": "1", "TTS_ENGINE": "espeak", "PATH": bin + ":" + os.Getenv("PATH")}
	for k, v := range timing {
		env[k] = v
	}
	c := startClusterOn(t, pg, 2, env)
	return &faultCluster{cluster: c, pg: pg, trace: trace, top: t}
}

// faultFigures are what one schedule measured.
type faultFigures struct {
	seed          uint64
	kind          string
	takenOver     bool          // the order was delivered by the other node
	deathToDone   time.Duration // from the fault to the order done (0: no takeover)
	wastedEngine  time.Duration // engine time of the node that lost the order
	lateProcesses int           // processes it started after it was resumed
}

func (f faultFigures) String() string {
	if !f.takenOver {
		return fmt.Sprintf("%s: the job ended before the fault took hold (no takeover), %s after it", f.kind,
			f.deathToDone.Round(10*time.Millisecond))
	}
	return fmt.Sprintf("%s: taken over; death to delivery %s, engine time wasted %s, processes started after resuming %d",
		f.kind, f.deathToDone.Round(10*time.Millisecond), f.wastedEngine.Round(10*time.Millisecond), f.lateProcesses)
}

// run plays the schedule of seed and checks its order.
func (fc *faultCluster) run(t *testing.T, seed uint64) faultFigures {
	rng := rand.New(rand.NewPCG(seed, 29))
	c := fc.cluster
	c.t = t
	kinds := []string{"freeze", "freeze+delete", "kill-restart", "freeze+postgres-restart"}
	fig := faultFigures{seed: seed, kind: kinds[rng.IntN(len(kinds))]}
	edits := fc.transcriptToEdit(t, seed)
	entry := rng.IntN(len(c.nodes))
	h := c.at(entry)
	text := strings.Repeat(fmt.Sprintf("Schedule %d says a few words, then a few more. ", seed), 90+rng.IntN(30)) // 4,700–6,300 characters: three or four espeak-ng pieces
	sid, payURL := h.checkout(ttsOrder(text, "nova", "mp3", 1, fmt.Sprintf("fault-%d@example.com", seed), "en"))
	h.wantStatus(h.do("POST", c.on(entry, payURL)+"/pay", "", nil, nil), 303)
	id := fc.one(`SELECT id FROM orders WHERE session_id = $1`, sid)
	victim := fc.runnerOf(t, id)
	time.Sleep(time.Duration(rng.IntN(800)) * time.Millisecond) // somewhere mid-job
	node := c.nodes[victim]
	faultAt := time.Now()
	doneAt, resumedAt := fc.fault(t, rng, fig.kind, victim, id, edits)
	if doneAt.IsZero() {
		doneAt = fc.waitDone(t, id, 120*time.Second)
	}
	fig.deathToDone = doneAt.Sub(faultAt)
	fig.takenOver = fc.one(`SELECT claimed_by FROM orders WHERE id = $1`, id) != node.id
	served := fc.one(`SELECT result_key FROM orders WHERE id = $1`, id)
	var before [32]byte
	if served != "" {
		before = fc.digest(t, served)
	}
	edits.wg.Wait()
	// Give the resumed node time to try everything it would.
	time.Sleep(3 * faultDeadAfter)
	fc.check(t, id, fig.kind, served, before)
	fc.checkEdits(t, edits, fig.kind == "freeze+delete")
	// The node that lost the order started nothing after it came back (at most one
	// process of each engine that was about to start).
	if fig.kind != "kill-restart" {
		late := fc.processesOf(node.id, resumedAt)
		fig.lateProcesses = late
		if late > 2 {
			t.Errorf("order %s: node %s started %d engine processes after it was resumed", id, node.id, late)
		}
	}
	fig.wastedEngine = fc.engineTime(node.id)
	fc.resetTrace()
	return fig
}

// fault plays the schedule's fault (kind) on the node running the order, victim, and saves
// the visitor's edit at the worst moments: on the frozen node (the request waits in its
// socket and is handled when it resumes) and on the other node, racing the takeover; with
// "Delete now", a burst of saves racing it. It returns when the other node delivered
// (zero after a kill: not waited for) and when the victim runs again.
func (fc *faultCluster) fault(t *testing.T, rng *rand.Rand, kind string, victim int, id string, e *scheduleEdits) (doneAt, resumedAt time.Time) {
	c := fc.cluster
	node, other := c.nodes[victim], 1-victim
	if kind == "kill-restart" {
		node.cmd.Process.Signal(syscall.SIGKILL)
		node.cmd.Wait()
		fc.save(e, other)
		time.Sleep(faultDeadAfter + time.Duration(rng.IntN(1000))*time.Millisecond)
		c.t = fc.top // a restarted node lives as long as the suite
		c.start(node)
		c.t = t
		return time.Time{}, time.Now()
	}
	node.cmd.Process.Signal(syscall.SIGSTOP)
	fc.save(e, victim)
	fc.save(e, other)
	if kind == "freeze+postgres-restart" {
		time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
		fc.pg.Down()
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		fc.pg.Up(t)
	}
	// Frozen until the other node delivered, and longer: as a long GC pause would.
	doneAt = fc.waitDone(t, id, 120*time.Second)
	if kind == "freeze+delete" {
		fc.deleteNow(t, other, id)
		// Saves 3 ms apart from before the delete to after it: some record their edit
		// just before the mark and write the file just after the delete listed the files.
		deleteAt := 10 + rng.IntN(40)
		for i := range 20 {
			fc.saveAfter(e, other, time.Duration(i*3)*time.Millisecond)
		}
		time.Sleep(time.Duration(deleteAt) * time.Millisecond)
		fc.deleteLink(t, other, e.page)
	}
	time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
	node.cmd.Process.Signal(syscall.SIGCONT)
	return doneAt, time.Now()
}

// check holds the order to what "exactly once" promises (the suite's comment): its end,
// its letter, the delivered bytes kept (served: the key and its digest at delivery), and a
// deleted result gone.
func (fc *faultCluster) check(t *testing.T, id, kind, served string, before [32]byte) {
	t.Helper()
	status := fc.one(`SELECT status || ' ' || error FROM orders WHERE id = $1`, id)
	if status != "done " && status != "expired " && !strings.HasPrefix(status, "refunded ") {
		t.Errorf("order %s ended %q", id, status)
	}
	if strings.HasPrefix(status, "refunded ") && strings.TrimSpace(strings.TrimPrefix(status, "refunded")) == "" {
		t.Errorf("order %s refunded without a reason", id)
	}
	if n := fc.letters(id); n != 1 {
		t.Errorf("order %s: %d letters, want 1", id, n)
	}
	if kind != "freeze+delete" {
		if served != "" {
			if now := fc.one(`SELECT result_key FROM orders WHERE id = $1`, id); now != served || fc.digest(t, now) != before {
				t.Errorf("order %s: the delivered result was replaced (%s → %s)", id, served, now)
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

// runnerOf waits for the order's job to run an engine process and returns the index of
// the node running it.
func (fc *faultCluster) runnerOf(t *testing.T, id string) int {
	t.Helper()
	var runner string
	if !testkit.WaitFor(60*time.Second, func() bool {
		runner = fc.one(`SELECT COALESCE(attempted_by[array_length(attempted_by, 1)], '') FROM river_job
			WHERE kind = 'fulfil' AND args->>'order_id' = $1 AND state = 'running'`, id)
		return runner != "" && fc.processesOf(runner, time.Time{}) > 0
	}) {
		t.Fatalf("order %s never ran", id)
	}
	for i, n := range fc.nodes {
		if n.id == runner {
			return i
		}
	}
	t.Fatalf("order %s runs on an unknown node %q", id, runner)
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
}

func (fc *faultCluster) traced() []tracedProcess {
	data, _ := os.ReadFile(fc.trace)
	var out []tracedProcess
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			continue
		}
		s, _ := strconv.ParseInt(f[2], 10, 64)
		e, _ := strconv.ParseInt(f[3], 10, 64)
		out = append(out, tracedProcess{node: f[0], engine: f[1], start: time.Unix(0, s), end: time.Unix(0, e)})
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

// reportFigures logs the suite's figures: death to delivery and wasted engine time.
func reportFigures(t *testing.T, figs []faultFigures) {
	if len(figs) == 0 {
		return
	}
	var total, wasted time.Duration
	n := 0
	for _, f := range figs {
		if f.takenOver {
			total += f.deathToDone
			wasted += f.wastedEngine
			n++
		}
	}
	if n == 0 {
		t.Logf("%d schedules, no takeover", len(figs))
		return
	}
	t.Logf("%d schedules, %d takeovers: mean death to delivery %s, mean engine time wasted per takeover %s",
		len(figs), n, (total / time.Duration(n)).Round(10*time.Millisecond),
		(wasted / time.Duration(n)).Round(10*time.Millisecond))
}
