package admin

import (
	"sync"
	"time"

	"parla/api/orders"
)

// limiter counts failed attempts (wrong passwords, wrong bearer tokens) in fixed windows,
// per client address and for everyone. Only failures count and only failures are held
// back by the global count, so a flood from many addresses cannot lock the operator with
// the right password out; an address past its own count is refused unchecked until the
// window ends. Counts live in this process (a node of a cluster counts its own).
type limiter struct {
	mu        sync.Mutex
	perClient int
	global    int
	window    time.Duration
	clients   map[string]*count
	all       count
	fullUntil time.Time // makeRoom found every entry blocking until then
}

type count struct {
	start time.Time
	n     int
}

// at is the count in the window that holds now (0 once the window has passed).
func (c *count) at(now time.Time, window time.Duration) int {
	if now.Sub(c.start) >= window {
		return 0
	}
	return c.n
}

func (c *count) add(now time.Time, window time.Duration) int {
	if now.Sub(c.start) >= window {
		c.start, c.n = now, 0
	}
	c.n++
	return c.n
}

func newLimiter(perClient, global int, window time.Duration) *limiter {
	return &limiter{perClient: perClient, global: global, window: window, clients: map[string]*count{}}
}

// maxClients bounds the table; past it, entries that block nobody make room (makeRoom).
const maxClients = 10000

// blocked reports whether ip's failures in this window have reached its limit: its
// attempts are then refused without being checked.
func (l *limiter) blocked(ip string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.clients[orders.ClientKey(ip)]
	return ok && c.at(now, l.window) >= l.perClient
}

// fail counts one failed attempt from ip and reports whether it is within both limits (a
// failure past either is answered 429).
func (l *limiter) fail(ip string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := orders.ClientKey(ip)
	c, ok := l.clients[key]
	if !ok {
		if !l.makeRoom(now) {
			return l.all.add(now, l.window) <= l.global
		}
		c = &count{start: now}
		l.clients[key] = c
	}
	mine := c.add(now, l.window)
	everyone := l.all.add(now, l.window)
	return mine <= l.perClient && everyone <= l.global
}
