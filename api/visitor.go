package api

import (
	"context"
	"errors"
	"net"
	"os"
	"time"
)

// watchConn returns a context that ends when the client on conn goes away, for work done
// for a visitor who waits for its answer (an upload's measure). Fiber and fasthttp cancel
// nothing when a client leaves (c.UserContext() is Background), so the connection itself
// is watched: with the request read whole, a read on it blocks until the client closes it
// (EOF or reset: it left) or sends the next request first. stop ends the watch and must be
// called before the handler returns, since fasthttp reads the next request from conn; it
// reports whether a byte of that request was taken, in which case the connection must be
// closed after the answer (clients that pipeline requests behind an upload are rare).
// A client that half-closes its side while it waits is taken for gone.
func watchConn(parent context.Context, conn net.Conn) (ctx context.Context, stop func() (consumed bool)) {
	ctx, cancel := context.WithCancel(parent)
	// No deadline while watching (the body's reader set one per read); stop sets one to end
	// the read, and fasthttp sets its own before the next request.
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		return ctx, func() bool { cancel(); return false }
	}
	done := make(chan bool, 1)
	go func() {
		var b [1]byte
		n, err := conn.Read(b[:])
		if n == 0 && !errors.Is(err, os.ErrDeadlineExceeded) {
			cancel() // the visitor left
		}
		done <- n > 0
	}()
	return ctx, func() bool {
		conn.SetReadDeadline(time.Now())
		consumed := <-done
		cancel()
		return consumed
	}
}
