package api

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"parla/api/orders"
)

// Listener guards the accept loop. Running out of file descriptors (or the kernel
// refusing one connection) is waited out with back-off instead of ending the server, and
// no single client (an IPv4 address, or an IPv6 /64: orders.ClientKey) may hold more than
// PerAddress connections at once: a connection over that is closed as soon as it is
// accepted, so a few hundred idle sockets from one host cannot use up the process's
// descriptors. Loopback is not exempt.
type Listener struct {
	net.Listener
	perAddress int
	log        *slog.Logger

	mu   sync.Mutex
	open map[string]int // by orders.ClientKey
	// silent are the connections that have not sent a byte yet: closed with the listener.
	silent map[*countedConn]struct{}
}

// DefaultPerAddress is well above what a browser opens to one site (6 to 8 over HTTP/1.1)
// and what the load benchmark opens from one host: 50 clients, which briefly hold more
// than 64 while closed connections are being noticed (measured: 64 failed 66 of 5,000
// requests).
const DefaultPerAddress = 128

// NewListener wraps ln with the accept guard and a cap of perAddress connections per client
// address (DefaultPerAddress when 0 or less).
func NewListener(ln net.Listener, perAddress int, log *slog.Logger) *Listener {
	if perAddress <= 0 {
		perAddress = DefaultPerAddress
	}
	if log == nil {
		log = slog.Default()
	}
	return &Listener{Listener: ln, perAddress: perAddress, log: log, open: map[string]int{},
		silent: map[*countedConn]struct{}{}}
}

// Accept returns the next connection within its address's cap, retrying errors that pass.
func (l *Listener) Accept() (net.Conn, error) {
	delay := 5 * time.Millisecond
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !retryable(err) {
				return nil, err
			}
			l.log.Warn("accepting connections failed, retrying", "err", err, "in", delay)
			time.Sleep(delay)
			delay = min(delay*2, time.Second)
			continue
		}
		delay = 5 * time.Millisecond
		addr := remoteAddr(c)
		if !l.take(addr) {
			c.Close() // over the cap: the client's other connections are still served
			continue
		}
		cc := &countedConn{Conn: c, l: l, release: func() { l.give(addr) }}
		l.mu.Lock()
		l.silent[cc] = struct{}{}
		l.mu.Unlock()
		return cc, nil
	}
}

// retryable tells the accept errors that pass: out of descriptors or buffers, a
// connection reset before it was accepted. A closed listener is not one.
func retryable(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// remoteAddr is the client a connection counts under: its address's orders.ClientKey.
func remoteAddr(c net.Conn) string {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return orders.ClientKey(ap.Addr().Unmap().String())
	}
	return ""
}

func (l *Listener) take(a string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[a] >= l.perAddress {
		return false
	}
	l.open[a]++
	return true
}

func (l *Listener) give(a string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[a]--; l.open[a] <= 0 {
		delete(l.open, a)
	}
}

// Open is how many connections an address's client (its IPv6 /64 too) holds now.
func (l *Listener) Open(a netip.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[orders.ClientKey(a.Unmap().String())]
}

// Close stops accepting and closes the connections that have not sent a byte yet. The
// HTTP server's shutdown waits for every connection it counts as active, and fasthttp
// counts a connection active from its accept until its first request is served: one a
// client opened and left unused (a browser's preconnect, an HTTP client's spare dial)
// held a shutdown until its read timeout (30 s) — past the 10 s the server allows, so the
// shutdown failed.
func (l *Listener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	silent := l.silent
	l.silent = map[*countedConn]struct{}{}
	l.mu.Unlock()
	for c := range silent {
		c.Close()
	}
	return err
}

// spoke records that c sent its first byte.
func (l *Listener) spoke(c *countedConn) {
	l.mu.Lock()
	delete(l.silent, c)
	l.mu.Unlock()
}

// countedConn gives its place back once, when it is closed, and tells its listener when
// it first sends something.
type countedConn struct {
	net.Conn
	l       *Listener
	spoken  atomic.Bool
	once    sync.Once
	release func()
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.spoken.Load() {
		c.spoken.Store(true)
		c.l.spoke(c)
	}
	return n, err
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.spoke(c)
		c.release()
	})
	return err
}
