package v1

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"
)

// errClientGone ends a call's work when its client hung up: nobody would receive the
// answer, so the work stops and the hold is given back (charge).
var errClientGone = errors.New("the client closed the connection before the answer")

// watchClient returns ctx ended (errClientGone as its cause) when the client hangs up while
// the call works, and stop, which ends the watch before the answer is written. The request
// has been read whole, so the watch reads the connection itself: a hang-up reads as EOF or
// an error at once. A pipelined next request would be read here too (and ends the watch, the
// client being there), so the answer closes the connection (the SDKs open another). The read has no deadline while the call works; stop
// sets one in the past to end it, and fasthttp sets its own before any later read.
func watchClient(ctx context.Context, c *fiber.Ctx) (context.Context, func()) {
	conn := c.Context().Conn()
	if conn == nil || conn.SetReadDeadline(time.Time{}) != nil {
		return ctx, func() {}
	}
	c.Context().SetConnectionClose()
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b [1]byte
		n, err := conn.Read(b[:])
		var ne net.Error
		if n == 0 && (!errors.As(err, &ne) || !ne.Timeout()) { // a timeout is stop's deadline
			cancel(errClientGone)
		}
	}()
	return ctx, func() {
		conn.SetReadDeadline(time.Now())
		<-done
		cancel(nil)
	}
}
