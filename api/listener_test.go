package api

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
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

// A connection a client opened and left unused (a browser's preconnect, an HTTP client's
// spare dial) does not hold the server's shutdown: fasthttp counts it active until its
// first request, so the shutdown waited for its 30 s read timeout. One that was served
// and is idle is closed as before.
func TestShutdownClosesConnectionsThatSentNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{ReadTimeout: 30 * time.Second, IdleTimeout: 15 * time.Second, DisableStartupMessage: true})
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("ok") })
	served := make(chan error, 1)
	go func() { served <- app.Listener(NewListener(ln, 0, nil)) }()

	silent, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	idle, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := bufio.NewReader(idle).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the silent one is accepted and waiting

	started := time.Now()
	if err := app.ShutdownWithTimeout(10 * time.Second); err != nil {
		t.Fatalf("shutdown with a connection that sent nothing: %v after %s", err, time.Since(started).Round(time.Millisecond))
	}
	<-served
}
