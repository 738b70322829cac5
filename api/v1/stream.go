package v1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
)

// streamWork writes a call's answer to w as it is made; abort, when set, writes the last
// words of a stream that failed after its first byte (an SSE error event).
type streamWork struct {
	contentType string
	work        func(ctx context.Context, w io.Writer) error
	abort       func(w io.Writer, err error)
}

// stream runs a priced call whose answer is sent as the work makes it (speech, server-sent
// events). The price is held before anything is sent (429 insufficient_quota, nothing
// done). A work that fails before its first byte is answered as an unstreamed call's
// failure, its price given back. Once bytes are out the status is sent: a failure, or a
// client that leaves, ends the stream (abort's last words) and gives the price back; the
// call is settled only when the work has ended and its last byte is flushed. The stream is
// written after the handler returns, so the call's context is the request's without its
// cancellation, bounded by callTimeout, and the client is watched until the last flush.
func (a *API) stream(c *fiber.Ctx, call credit.Call, s streamWork) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), callTimeout)
	h, err := a.hold(ctx, c, call)
	if err != nil {
		cancel()
		return a.fail(c, err, "")
	}
	conn := c.Context().Conn()
	wctx, stop := watchClient(ctx, c)
	p := startPiped(wctx, s.work)
	if err := p.firstByte(); err != nil {
		stop()
		err = a.end(ctx, h, call.Model, gone(wctx, err))
		cancel()
		return a.fail(c, err, "")
	}
	setCharged(c, h)
	c.Set(fiber.HeaderContentType, s.contentType)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		err := p.copyTo(w, conn)
		stop()
		if err = gone(wctx, err); err != nil && s.abort != nil {
			s.abort(w, err)
			w.Flush()
		}
		if err := a.end(ctx, h, call.Model, err); err != nil {
			a.deps.Log.Warn("a streamed call ended before its answer was whole; nothing charged", "call", h.ID, "err", err)
		}
	})
	return nil
}

// piped is a work running into a pipe that the stream writer empties.
type piped struct {
	r       *io.PipeReader
	started chan struct{} // closed at the work's first write
	done    chan error    // the work's outcome
}

// startPiped runs work in its own goroutine, writing into the pipe.
func startPiped(ctx context.Context, work func(ctx context.Context, w io.Writer) error) *piped {
	r, w := io.Pipe()
	p := &piped{r: r, started: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		err := work(ctx, &firstWrite{w: w, started: p.started})
		w.CloseWithError(err)
		p.done <- err
	}()
	return p
}

// firstByte waits for the work's first write, or its end: the error of a work that ended
// before writing anything (nil once it writes, or when it ended well having written
// nothing). The outcome stays for copyTo.
func (p *piped) firstByte() error {
	select {
	case <-p.started:
		return nil
	case err := <-p.done:
		p.done <- err
		return err
	}
}

// errStreamEnded stops a work whose stream can take no more (its client gone).
var errStreamEnded = errors.New("the answer's stream was closed")

// pieceTimeout is how long each piece of a stream may take to reach the client. The
// server gives a whole answer WriteTimeout (5 minutes), which a long stream outlives: each
// piece moves the connection's write deadline on instead.
const pieceTimeout = 30 * time.Second

// copyTo sends the work's output to w, flushed as it comes, and returns the work's
// outcome, or w's failure (the work is stopped and waited for).
func (p *piped) copyTo(w *bufio.Writer, conn net.Conn) error {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := p.r.Read(buf)
		if n > 0 {
			if conn != nil {
				conn.SetWriteDeadline(time.Now().Add(pieceTimeout))
			}
			if _, err := w.Write(buf[:n]); err != nil || w.Flush() != nil {
				p.r.CloseWithError(errStreamEnded)
				<-p.done
				return errStreamEnded
			}
		}
		if rerr != nil {
			return <-p.done
		}
	}
}

// firstWrite tells started at the first write.
type firstWrite struct {
	w       io.Writer
	started chan struct{}
	once    bool
}

func (f *firstWrite) Write(b []byte) (int, error) {
	if !f.once && len(b) > 0 {
		f.once = true
		close(f.started)
	}
	return f.w.Write(b)
}
