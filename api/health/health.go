// Package health answers whether this node can serve: the readiness checks behind /readyz
// (database, storage, engines, free disk) and the free space of DATA_DIR, which the metrics
// show too; the OpenAI-compatible servers the engines call, asked at the start and by
// /readyz (servers.go); and the start's block on closed services with the reasons /readyz
// and /admin give (closed.go). It knows no HTTP; main builds the checks (and says what opens
// a closed engine in its configuration) and api serves the report.
package health

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Check is one readiness check.
type Check struct {
	Name string
	// Optional marks a service an operator may leave closed (no engine set up for it):
	// its failure is reported as "closed" and leaves the node ready.
	Optional bool
	Run      func(ctx context.Context) error
	// Detail is shown with the result to the operator, whatever the status: which device the
	// whisper engine computes on, say. Empty for most checks.
	Detail string
}

// Result is what one check found.
type Result struct {
	Status string `json:"status"` // ok, failed or closed
	Error  string `json:"error,omitempty"`
	Detail string `json:"detail,omitempty"` // the Check's Detail
}

// The statuses of a Result.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
	StatusClosed = "closed"
)

// Report is /readyz's answer: ok when no required check failed, each check's result, and
// the names of the failed ones.
type Report struct {
	OK     bool              `json:"ok"`
	Checks map[string]Result `json:"checks"`
	Failed []string          `json:"failed,omitempty"`
}

// Checker runs every check, concurrently, each within Timeout. With MaxAge set, a report
// younger than MaxAge is answered again instead of running the checks: /readyz is public
// and unlimited, and a run writes a file (the storage check) and pings the database, so a
// flood of requests costs at most one run per MaxAge.
type Checker struct {
	Checks  []Check
	Timeout time.Duration // per check; default 2 s
	MaxAge  time.Duration // how long a report is answered again; 0: every call runs the checks

	now  func() time.Time // the clock (tests); time.Now when nil
	mu   sync.Mutex       // held during a run: concurrent callers wait for it and share it
	last Report
	at   time.Time
}

// Ready answers a recent report (see MaxAge) or runs the checks and judges them. Each
// caller gets its own copy.
func (c *Checker) Ready(ctx context.Context) Report {
	if c.MaxAge <= 0 {
		return c.run(ctx)
	}
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || now().Sub(c.at) >= c.MaxAge {
		// The run is shared: a caller that leaves must not leave a cancelled one behind.
		// Timeout bounds it all the same.
		c.last, c.at = c.run(context.WithoutCancel(ctx)), now()
	}
	return c.last.clone()
}

// clone copies a report, so that a caller may edit its copy (the handler hides errors).
func (r Report) clone() Report {
	r.Checks = maps.Clone(r.Checks)
	r.Failed = slices.Clone(r.Failed)
	return r
}

// run runs the checks now and judges them.
func (c *Checker) run(ctx context.Context) Report {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	errs := make([]error, len(c.Checks))
	var wg sync.WaitGroup
	for i, ch := range c.Checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			errs[i] = runCheck(ctx, ch.Run)
		}()
	}
	wg.Wait()
	return Judge(c.Checks, errs)
}

// runCheck calls f, giving up when ctx ends even if f does not (a hung database or disk).
func runCheck(ctx context.Context, f func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("no answer: %w", ctx.Err())
	}
}

// Judge turns the checks' errors (errs[i] belongs to checks[i]) into a report: a failed
// required check makes the node unready; a failed optional one is "closed".
func Judge(checks []Check, errs []error) Report {
	r := Report{OK: true, Checks: make(map[string]Result, len(checks))}
	for i, ch := range checks {
		switch err := errs[i]; {
		case err == nil:
			r.Checks[ch.Name] = Result{Status: StatusOK, Detail: ch.Detail}
		case ch.Optional:
			r.Checks[ch.Name] = Result{Status: StatusClosed, Error: err.Error(), Detail: ch.Detail}
		default:
			r.Checks[ch.Name] = Result{Status: StatusFailed, Error: err.Error(), Detail: ch.Detail}
			r.Failed = append(r.Failed, ch.Name)
			r.OK = false
		}
	}
	sort.Strings(r.Failed)
	return r
}

// Disk is a file system's size and the space an unprivileged process may still use.
type Disk struct {
	Free, Total uint64 // bytes
}

// DiskSpace reads the file system holding dir (statfs).
func DiskSpace(dir string) (Disk, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return Disk{}, fmt.Errorf("reading free space of %s: %w", dir, err)
	}
	bs := uint64(st.Bsize)
	return Disk{Free: st.Bavail * bs, Total: st.Blocks * bs}, nil
}

// FreeSpace is a check that dir's file system has at least min bytes free.
func FreeSpace(dir string, min uint64) func(context.Context) error {
	return func(context.Context) error {
		d, err := DiskSpace(dir)
		if err != nil {
			return err
		}
		return enough(d, min)
	}
}

// Short is a probe that dir's file system has less than min bytes free: the sweep frees
// unpaid uploads first then (orders.Config.LowDisk). A disk it cannot read is not short:
// the readiness check reports that.
func Short(dir string, min uint64) func() bool {
	return func() bool {
		d, err := DiskSpace(dir)
		return err == nil && enough(d, min) != nil
	}
}

// enough says whether d has min bytes free, and if not, how short it is.
func enough(d Disk, min uint64) error {
	if d.Free < min {
		return fmt.Errorf("%s free of %s, below the %s required (READY_MIN_FREE_BYTES)", size(d.Free), size(d.Total), size(min))
	}
	return nil
}

// size writes a byte count for people: 1.5 GiB, 300 MiB, 12 KiB, 7 B.
func size(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
