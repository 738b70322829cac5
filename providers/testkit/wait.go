package testkit

import (
	"os"
	"testing"
	"time"
)

// PollInterval is how often WaitFor asks again: short enough that a test waits at most a
// few milliseconds longer than the event, long enough not to load the program it asks.
const PollInterval = 20 * time.Millisecond

// ciFactor stretches every wait in CI (CI set), where a shared runner may be several times
// slower than a laptop; River's riversharedtest.WaitTimeout does the same (3 s, 10 s in CI).
const ciFactor = 3

// Timeout is d, or ciFactor times d when CI is set.
func Timeout(d time.Duration) time.Duration {
	if os.Getenv("CI") != "" {
		return ciFactor * d
	}
	return d
}

// WaitFor calls cond at once and then every PollInterval until it returns true, and reports
// whether it did within Timeout(timeout). cond runs on the caller's goroutine, so it may
// fail the test itself (t.Fatal) on an answer that no waiting will change. Callers that
// have their own message for a timeout use WaitFor; the others use Eventually.
func WaitFor(timeout time.Duration, cond func() bool) bool {
	return WaitEvery(PollInterval, timeout, cond)
}

// WaitEvery is WaitFor asking every interval: a benchmark that times the event asks more
// often than PollInterval.
func WaitEvery(interval, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(Timeout(timeout))
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}

// Eventually is WaitFor that fails the test, saying what it waited for, when cond has not
// held within Timeout(timeout).
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, what string) {
	t.Helper()
	if !WaitFor(timeout, cond) {
		t.Fatalf("waited %s for %s", Timeout(timeout), what)
	}
}
