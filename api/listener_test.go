package api

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"
)

// scriptedListener hands out the connections and errors it is given, in order.
type scriptedListener struct {
	net.Listener
	script []any
}

func (s *scriptedListener) Accept() (net.Conn, error) {
	if len(s.script) == 0 {
		return nil, net.ErrClosed
	}
	next := s.script[0]
	s.script = s.script[1:]
	if err, ok := next.(error); ok {
		return nil, err
	}
	return next.(net.Conn), nil
}

type fakeConn struct {
	net.Conn
	from   string
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr {
	return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(c.from))
}
func (c *fakeConn) Close() error { c.closed = true; return nil }

func TestListenerRetriesWhatPassesAndCapsEachAddress(t *testing.T) {
	var conns []*fakeConn
	script := []any{&net.OpError{Op: "accept", Err: syscall.EMFILE}, fmt.Errorf("accept: %w", syscall.ECONNABORTED)}
	for i := range 4 {
		c := &fakeConn{from: fmt.Sprintf("203.0.113.9:%d", 1000+i)}
		conns = append(conns, c)
		script = append(script, c)
	}
	other := &fakeConn{from: "[::ffff:198.51.100.1]:80"}
	script = append(script, other)
	l := NewListener(&scriptedListener{script: script}, 2, nil)

	a, err := l.Accept() // after two errors that pass
	if err != nil || a.(*countedConn).Conn != conns[0] {
		t.Fatalf("first accept = %v, %v", a, err)
	}
	b, _ := l.Accept()
	if b.(*countedConn).Conn != conns[1] {
		t.Fatalf("second accept = %v", b)
	}
	// The address holds two: its third and fourth connections are closed at once, and the
	// next address is served.
	c, _ := l.Accept()
	if c.(*countedConn).Conn != other || !conns[2].closed || !conns[3].closed {
		t.Fatalf("third accept = %v; over-cap closed: %v %v", c, conns[2].closed, conns[3].closed)
	}
	if n := l.Open(netip.MustParseAddr("203.0.113.9")); n != 2 {
		t.Errorf("open = %d, want 2", n)
	}
	a.Close()
	a.Close() // twice gives the place back once
	if n := l.Open(netip.MustParseAddr("203.0.113.9")); n != 1 {
		t.Errorf("after close: open = %d, want 1", n)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a closed listener: %v", err)
	}
}
