package jobs

import (
	"errors"
	"sync"
	"time"
)

// errLeaseLapsed is returned by the process gate of a node whose heartbeat is not recent.
var errLeaseLapsed = errors.New("this node's heartbeat lease has lapsed")

// lease is a node's right to start engine processes: its last successful heartbeat on
// the monotonic clock, valid for leaseFor. Another node judges this one dead only after
// nodeDeadAfter without a beat, so a runner whose lease is valid still holds its orders.
type lease struct {
	mu    sync.Mutex
	last  time.Time
	valid time.Duration
	// epoch counts the lapses: a beat that comes valid or more after the one before it
	// starts a new epoch. A run holds the epoch it started in, so a node resumed after a
	// freeze starts nothing for the runs it had, even once it beats again.
	epoch int64
	// ended: the node was displaced (Queue.displaced); the lease never holds again.
	ended bool
}

// leaseFor is how long a beat keeps the lease: until two heartbeats before another node may
// judge this one dead, a margin for the beat's own round trip and a process start.
func leaseFor(heartbeat, deadAfter time.Duration) time.Duration {
	return deadAfter - 2*heartbeat
}

// renew records a successful heartbeat that was sent at sent.
func (l *lease) renew(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sent.After(l.last) {
		if !l.last.IsZero() && sent.Sub(l.last) >= l.valid {
			l.epoch++
		}
		l.last = sent
	}
}

// end lapses the lease for good.
func (l *lease) end() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
}

// current returns the lease's epoch, for a run starting now.
func (l *lease) current() int64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// checkRun is check for a run that started in epoch: it fails too once the lease lapsed
// since, whether or not the node beats again.
func (l *lease) checkRun(epoch int64) error {
	if l == nil {
		return nil
	}
	if err := l.check(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch != epoch || time.Since(l.last) >= l.valid {
		return errLeaseLapsed
	}
	return nil
}

// check returns errLeaseLapsed when the last beat is older than the lease.
func (l *lease) check() error {
	if l == nil {
		return nil // one process on SQLite: nobody else takes its orders
	}
	l.mu.Lock()
	last, ended := l.last, l.ended
	l.mu.Unlock()
	if ended || last.IsZero() || time.Since(last) >= l.valid {
		return errLeaseLapsed
	}
	return nil
}
