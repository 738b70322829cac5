package api

import (
	"bytes"
	"io"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// requestBody is the request's body as a stream: the connection itself when the server
// streams bodies, the buffered bytes otherwise.
func requestBody(c *fiber.Ctx) io.Reader {
	if r := c.Context().RequestBodyStream(); r != nil {
		return r
	}
	return bytes.NewReader(c.Body())
}

// uploadIdle is how long an upload may send nothing before it is cut: its deadline moves
// on with every read, so a 25 MB file on a slow line gets the time it needs.
const uploadIdle = 30 * time.Second

// progressDeadline extends a connection's read deadline by idle after every read.
type progressDeadline struct {
	r    io.Reader
	conn interface{ SetReadDeadline(time.Time) error }
	idle time.Duration
}

func (p *progressDeadline) Read(b []byte) (int, error) {
	if err := p.conn.SetReadDeadline(time.Now().Add(p.idle)); err != nil {
		return 0, err
	}
	return p.r.Read(b)
}

// closeUnreadBody closes the connection after the answer to a request whose body was not
// read to its end, on every route: a handler or middleware that refuses before reading (a
// wrong key, a limiter, a closed service) would otherwise leave the rest of the body on the
// connection, to be read as the next request (request smuggling: a hidden request answered,
// its X-Forwarded-For believed behind a proxy).
func closeUnreadBody(c *fiber.Ctx) error {
	err := c.Next()
	if unreadBody(c.Request()) {
		c.Context().SetConnectionClose()
	}
	return err
}

// unreadBody reports whether part of a streamed request body may still be on the
// connection. An empty read of the stream answers at once: io.EOF when all of its
// Content-Length was read, without reading anything. A chunked body's end cannot be asked
// without reading, so it counts as unread.
func unreadBody(req *fasthttp.Request) bool {
	if !req.IsBodyStream() {
		return false
	}
	if req.Header.ContentLength() < 0 {
		return true
	}
	_, err := req.BodyStream().Read(nil)
	return err != io.EOF
}

// refuseBody answers err without reading the rest of the body, and closes the connection
// after the answer so that the unread bytes are never taken for the next request.
func refuseBody(c *fiber.Ctx, err error) error {
	c.Context().SetConnectionClose()
	return err
}

// limitBody reads a streamed request body (larger than the buffered limit, or chunked)
// into memory up to BodyLimit for the JSON handlers, and refuses it beyond that. Only the
// upload route reads its body as a stream.
//
// A compressed body is refused (415): Fiber's Ctx.Body inflates whatever Content-Encoding
// names, without a limit, so 300 KB of gzip became 1.5 GB in memory; BodyLimit bounds only
// the bytes sent. No client of ours compresses a request.
func (s *server) limitBody(c *fiber.Ctx) error {
	req := c.Request()
	if enc := strings.TrimSpace(string(req.Header.ContentEncoding())); enc != "" && !strings.EqualFold(enc, "identity") {
		return refuseBody(c, fail("unsupported_media_type", "the request body must not be compressed (Content-Encoding)"))
	}
	if !req.IsBodyStream() {
		return c.Next()
	}
	data, err := io.ReadAll(io.LimitReader(req.BodyStream(), int64(s.cfg.BodyLimit)+1))
	if err != nil {
		return refuseBody(c, fail("bad_request", "the request body could not be read"))
	}
	if len(data) > s.cfg.BodyLimit {
		return refuseBody(c, fiber.ErrRequestEntityTooLarge)
	}
	req.SetBody(data)
	return c.Next()
}
