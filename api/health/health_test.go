package health

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	boom := errors.New("boom")
	checks := []Check{{Name: "database"}, {Name: "storage"}, {Name: "engine.sst", Optional: true}}
	for _, c := range []struct {
		name   string
		errs   []error
		ok     bool
		failed []string
		status map[string]string
	}{
		{"all ok", []error{nil, nil, nil}, true, nil,
			map[string]string{"database": "ok", "storage": "ok", "engine.sst": "ok"}},
		{"a closed service leaves the node ready", []error{nil, nil, boom}, true, nil,
			map[string]string{"engine.sst": "closed"}},
		{"a required check fails", []error{nil, boom, nil}, false, []string{"storage"},
			map[string]string{"storage": "failed", "database": "ok"}},
		{"failures are named in order", []error{boom, boom, boom}, false, []string{"database", "storage"},
			map[string]string{"database": "failed", "engine.sst": "closed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Judge(checks, c.errs)
			if r.OK != c.ok || !slices.Equal(r.Failed, c.failed) {
				t.Errorf("ok=%v failed=%v, want %v %v", r.OK, r.Failed, c.ok, c.failed)
			}
			for name, want := range c.status {
				if got := r.Checks[name]; got.Status != want || (want != "ok") != (got.Error != "") {
					t.Errorf("%s = %+v, want %s", name, got, want)
				}
			}
		})
	}
}

// A check's Detail reaches its result whatever the status: the operator sees the whisper
// device of a closed engine too.
func TestJudgeKeepsTheDetail(t *testing.T) {
	checks := []Check{{Name: "engine.sst", Optional: true, Detail: "whisper on CUDA0 (NVIDIA L4)"}, {Name: "disk"}}
	for _, err := range []error{nil, errors.New("no model")} {
		r := Judge(checks, []error{err, nil})
		if got := r.Checks["engine.sst"].Detail; got != "whisper on CUDA0 (NVIDIA L4)" {
			t.Errorf("error %v: detail %q", err, got)
		}
		if got := r.Checks["disk"].Detail; got != "" {
			t.Errorf("disk detail %q, want none", got)
		}
	}
}

// A check that hangs is given up after the timeout and fails the node.
func TestCheckerGivesUpOnAHungCheck(t *testing.T) {
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	c := &Checker{Timeout: 50 * time.Millisecond, Checks: []Check{
		{Name: "database", Run: func(ctx context.Context) error { <-hung; return nil }}, // ignores ctx
		{Name: "storage", Run: func(ctx context.Context) error { return nil }},
	}}
	start := time.Now()
	r := c.Ready(context.Background())
	// The database check hangs for ever: returning at all proves the give-up, 10 s (200
	// times the timeout) that it was the timeout, on a loaded runner too.
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
	if r.OK || r.Checks["database"].Status != StatusFailed || !strings.Contains(r.Checks["database"].Error, "no answer") ||
		r.Checks["storage"].Status != StatusOK {
		t.Errorf("report = %+v", r)
	}
}

func TestFreeSpace(t *testing.T) {
	dir := t.TempDir()
	d, err := DiskSpace(dir)
	if err != nil || d.Total == 0 || d.Free > d.Total {
		t.Fatalf("DiskSpace = %+v, %v", d, err)
	}
	if err := FreeSpace(dir, 1)(context.Background()); err != nil {
		t.Errorf("1 byte required: %v", err)
	}
	err = FreeSpace(dir, d.Total+1)(context.Background())
	if err == nil || !strings.Contains(err.Error(), "READY_MIN_FREE_BYTES") {
		t.Errorf("more than the disk required: %v", err)
	}
	if _, err := DiskSpace(dir + "/missing"); err == nil {
		t.Error("DiskSpace of a missing directory: no error")
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[uint64]string{7: "7 B", 1536: "1.5 KiB", 300 << 20: "300.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}

// With MaxAge, /readyz's checks run at most once per MaxAge however often it is asked
// (the storage check writes a file each run; the database takes a ping): concurrent and
// repeated callers share one run, each gets its own copy of the report, and a report older
// than MaxAge is made again.
func TestCheckerAnswersFromARecentRun(t *testing.T) {
	var runs atomic.Int32
	now := time.Unix(1000, 0)
	c := &Checker{MaxAge: time.Second, now: func() time.Time { return now }, Checks: []Check{
		{Name: "storage", Run: func(ctx context.Context) error { runs.Add(1); time.Sleep(10 * time.Millisecond); return nil }},
	}}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.Ready(context.Background())
			if !r.OK || r.Checks["storage"].Status != StatusOK {
				t.Errorf("report = %+v", r)
			}
			r.Checks["storage"] = Result{Status: "scribbled"} // the handler edits its copy
		}()
	}
	wg.Wait()
	for range 50 {
		c.Ready(context.Background())
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the checks ran %d times for 100 calls within MaxAge, want 1", n)
	}
	if r := c.Ready(context.Background()); r.Checks["storage"].Status != StatusOK {
		t.Errorf("a caller's edit reached the shared report: %+v", r)
	}
	now = now.Add(time.Second)
	c.Ready(context.Background())
	if n := runs.Load(); n != 2 {
		t.Errorf("after MaxAge the checks ran %d times in all, want 2", n)
	}
	// A caller that leaves does not leave a cancelled run behind for the next ones.
	now = now.Add(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := c.Ready(ctx); !r.OK {
		t.Errorf("run for a caller that left: %+v", r)
	}
}

// Short tells the sweep that free space is below the bound; an unreadable disk is not short.
func TestShort(t *testing.T) {
	dir := t.TempDir()
	d, err := DiskSpace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if Short(dir, 1)() || !Short(dir, d.Total+1)() || Short(dir+"/missing", d.Total+1)() {
		t.Errorf("Short: 1 byte %v, more than the disk %v, a missing directory %v",
			Short(dir, 1)(), Short(dir, d.Total+1)(), Short(dir+"/missing", d.Total+1)())
	}
}
