package testkit

import (
	"testing"
	"time"
)

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	if !WaitFor(time.Second, func() bool { calls++; return calls == 3 }) {
		t.Fatal("WaitFor gave up on a condition that held at the third call")
	}
	if calls != 3 {
		t.Errorf("cond called %d times, want 3", calls)
	}
}

func TestWaitForGivesUpAfterItsTimeout(t *testing.T) {
	t.Setenv("CI", "")
	start := time.Now()
	if WaitFor(50*time.Millisecond, func() bool { return false }) {
		t.Fatal("WaitFor reported a condition that never held")
	}
	// The lower bound is the proof; the upper one only that it gave up at all (a loaded
	// runner may not schedule the poller for a while).
	if took := time.Since(start); took < 50*time.Millisecond || took > 10*time.Second {
		t.Errorf("gave up after %v, want a little over 50 ms", took)
	}
}

func TestTimeoutIsLongerInCI(t *testing.T) {
	t.Setenv("CI", "")
	if got := Timeout(time.Second); got != time.Second {
		t.Errorf("outside CI: %v", got)
	}
	t.Setenv("CI", "true")
	if got := Timeout(time.Second); got != ciFactor*time.Second {
		t.Errorf("in CI: %v", got)
	}
}
