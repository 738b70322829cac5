package media

// What a visitor's free request may make the machine do: its ffprobe and ffmpeg processes
// run in one pool (Config.MaxVisitors), and its decodes at the lowest CPU priority, so that
// paid work keeps the cores. A pool bounds how many such processes run, not their share of
// the CPU: at nice 19 a process gets about 1.5 % of a core that a nice-0 encoder wants.
//
// The probe (ffprobe reading a header: a few hundred KB, tens of milliseconds of CPU,
// bounded by the analysis' bytes and time) holds the slot but runs at normal priority: at
// nice 19 on a machine busy with paid work it starved past the 15 s an analysis is given
// (seen in media/links' tests at load 25), and a link that cannot be probed is refused,
// while a decode that starves only leaves the speech unmeasured.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// idleNice is the niceness of a visitor's processes: the lowest priority there is.
const idleNice = "19"

// VisitorSlot waits for a place in the visitors' pool (the one CheckUpload measures in)
// and returns what gives it back. A link analysis holds it over its probe and its decode;
// uploads and link analyses share the pool, so a visitor's free work of either kind never
// takes more than Config.MaxVisitors processes.
// A wait that outlasts ctx's deadline fails with ErrVisitorsBusy: too many visitors at once.
func (r *Runner) VisitorSlot(ctx context.Context) (func(), error) {
	release, err := slot(ctx, r.visitors)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w: %w", ErrVisitorsBusy, err)
	}
	return release, err
}

// ErrVisitorsBusy: a visitor's request waited for the visitors' pool until its deadline.
var ErrVisitorsBusy = errors.New("too many visitors' files being read at once")

// IdleCommand is the command line that runs program with args at the lowest CPU priority:
// through nice(1), which sets the priority and then becomes the program (same process, so
// a cancelled context kills the program itself). Without nice it is the program alone.
func IdleCommand(niceProgram, program string, args []string) (string, []string) {
	if niceProgram == "" {
		return program, args
	}
	return niceProgram, append([]string{"-n", idleNice, program}, args...)
}

// runIdle is run at the lowest CPU priority. Errors name program, not nice. When ctx
// carries a CPU budget (withCPUBudget), the process is killed once the CPU time it used
// passes the budget, and the error wraps errMeasureDeadline: at the lowest priority, the
// wall-clock time a decode takes says how busy the machine is, not what the file costs.
func runIdle(ctx context.Context, program string, args []string, stdin io.Reader, stdout io.Writer) error {
	path, err := exec.LookPath(program)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMissingTool, program, err)
	}
	nice, _ := exec.LookPath("nice") // coreutils; without it the process runs at normal priority
	name, full := IdleCommand(nice, path, args)
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cmd := exec.CommandContext(cctx, name, full...)
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	stderr := &TailBuffer{Limit: stderrLimit}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second // see run
	base := baseName(program)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running %s: %w", base, err)
	}
	if budget, ok := ctx.Value(cpuBudgetKey{}).(func() time.Duration); ok {
		stop := watchCPU(cctx, cancel, cmd.Process.Pid, budget)
		defer stop()
	}
	err = cmd.Wait()
	if err == nil {
		return nil
	}
	if cctx.Err() != nil {
		return fmt.Errorf("running %s: %w", base, context.Cause(cctx))
	}
	if tail := strings.TrimSpace(stderr.String()); tail != "" {
		return fmt.Errorf("running %s: %w: %s", base, err, tail)
	}
	return fmt.Errorf("running %s: %w", base, err)
}

// cpuBudgetKey carries, in a context, how much CPU time each process runIdle starts may use.
type cpuBudgetKey struct{}

// withCPUBudget makes the processes runIdle starts under ctx stop once their CPU time
// passes budget() (asked again as it runs: it may grow with the bytes read).
func withCPUBudget(ctx context.Context, budget func() time.Duration) context.Context {
	return context.WithValue(ctx, cpuBudgetKey{}, budget)
}

// watchCPU cancels ctx (with errMeasureDeadline) once process pid has used more CPU time
// than budget() allows, or, where the process's CPU time cannot be read (no /proc), once
// that much wall-clock time has passed. stop ends the watch.
func watchCPU(ctx context.Context, cancel context.CancelCauseFunc, pid int, budget func() time.Duration) (stop func()) {
	start := time.Now()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				used, ok := cpuTime(pid)
				if !ok {
					used = time.Since(start)
				}
				if used > budget() {
					cancel(errMeasureDeadline)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// cpuTime is the CPU time (user and system, all threads) process pid has used so far,
// from /proc/<pid>/stat.
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; the fields after its ")" do not.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	// Fields 14 and 15 (utime, stime), counted from the state (field 3) at f[0].
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux port Go runs on.
const clockTicks = 100

// RemoteBounds is what a relayed link's measure may cost, from what its analysis knows.
type RemoteBounds struct {
	// Claimed is the length the probe read in the header: the price is set on it.
	Claimed time.Duration
	// Longest is the service's maximum (VTT_MAX_DURATION); 0: none.
	Longest time.Duration
	// Size is the file's size in bytes as the source announced it; <= 0: unknown.
	Size int64
	// BytesRead says how many bytes the relay has read from the source so far: the
	// decode's deadline grows with them (MeasureDeadline). Nil: the deadline of Size.
	BytesRead func() int64
}

// errMeasureDeadline ends a measure that outlasted the deadline its bytes allow.
var errMeasureDeadline = errors.New("measure outlasted its deadline")

// limit is the most audio the decode may count, and the error a file that passes it is
// refused with: the header's claim and its tolerance (LengthTolerance), the service's
// maximum, and what the file's size can honestly hold (DensityLimit), whichever is smallest.
func (b RemoteBounds) limit() (time.Duration, error) {
	limit, past := b.Claimed+LengthTolerance(b.Claimed), ErrDurationMismatch
	if b.Longest > 0 && b.Longest < limit {
		limit, past = b.Longest, ErrTooLong
	}
	if b.Size > 0 && DensityLimit(b.Size) < limit {
		limit, past = DensityLimit(b.Size), ErrTooDense
	}
	return limit, past
}

// MeasureRemoteBounded measures a relayed link (url must be a relay URL) for a visitor's
// analysis: at the lowest CPU priority, the decode stopping as soon as it passes b's limit
// (refused with ErrDurationMismatch, ErrTooLong or ErrTooDense: the header lies, the link
// is longer than taken, or it is a decode bomb), and refused with ErrTooDense when it runs
// longer than MeasureDeadline of the bytes read so far (in CPU time: see runIdle). A decoded length shorter than
// the header's by more than LengthTolerance is a lying header too (ErrDurationMismatch).
// The caller holds a VisitorSlot (over its probe too) and cancels ctx when the visitor
// leaves.
func (r *Runner) MeasureRemoteBounded(ctx context.Context, url string, b RemoteBounds) (Measurement, error) {
	if b.Claimed <= 0 {
		return Measurement{}, fmt.Errorf("%w: no length in the header", ErrUnreadable)
	}
	limit, past := b.limit()
	bytesRead := b.BytesRead
	if bytesRead == nil {
		bytesRead = func() int64 { return max(b.Size, 0) }
	}
	mctx := withCPUBudget(ctx, func() time.Duration { return MeasureDeadline(bytesRead()) })
	scan := &silenceScan{limit: samplesOf(limit) + 1}
	err := runIdle(mctx, r.ffmpeg, RemoteMeasureArgs(url), nil, scan)
	m := scan.measurement()
	switch {
	case m.Length > limit:
		// ffmpeg's error, if any, is only that the scan stopped reading.
		return Measurement{}, fmt.Errorf("%w: the header says %s, the audio goes on past %s", past,
			b.Claimed.Round(time.Second), limit.Round(time.Second))
	case errors.Is(err, errMeasureDeadline) && ctx.Err() == nil:
		return Measurement{}, fmt.Errorf("%w: measuring took more than %s", ErrTooDense, MeasureDeadline(bytesRead()))
	case err != nil:
		return Measurement{}, measureError(ctx, err)
	case m.Length <= 0:
		return Measurement{}, fmt.Errorf("%w: no audio samples", ErrUnreadable)
	case b.Claimed-m.Length > LengthTolerance(b.Claimed):
		return Measurement{}, fmt.Errorf("%w: header says %s, content holds %s", ErrDurationMismatch,
			b.Claimed.Round(time.Second), m.Length.Round(time.Millisecond))
	}
	return m, nil
}

// samplesOf is how many samples at PCMRate d lasts.
func samplesOf(d time.Duration) int64 {
	return int64(d / (time.Second / PCMRate))
}
