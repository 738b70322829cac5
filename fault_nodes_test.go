package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
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

// The fault suite's hands and eyes (fault_test.go): freezing, resuming, killing and
// restarting nodes, reading the database, the bucket and the mail server, and the engine
// processes' trace.

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
