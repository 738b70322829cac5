package api

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
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
	return &Listener{Listener: ln, perAddress: perAddress, log: log, open: map[string]int{}}
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
		return &countedConn{Conn: c, release: func() { l.give(addr) }}, nil
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

// countedConn gives its place back once, when it is closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
