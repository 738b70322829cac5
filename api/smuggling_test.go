package api

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// A request refused before its body was read closes its connection after the answer, on
// every route: the unread body is never read as a request of its own. Before, a refused
// upload carrying "GET /healthz" in its body drew two answers on one connection. A body read
// to its end keeps the connection open for the next request.
func TestAnUnreadBodyIsNeverReadAsTheNextRequest(t *testing.T) {
	app := newServer(Config{BodyLimit: 1024, StreamedPaths: []string{"/refuse", "/read"}}, Deps{}).newApp()
	app.Post("/refuse", func(c *fiber.Ctx) error { return fiber.ErrUnauthorized })
	app.Get("/hidn", func(c *fiber.Ctx) error { return c.SendString("hidden") })
	app.Get("/next", func(c *fiber.Ctx) error { return c.SendString("next") })
	app.Post("/read", func(c *fiber.Ctx) error {
		n, err := io.Copy(io.Discard, c.Context().RequestBodyStream())
		if err != nil {
			return err
		}
		return c.SendString(fmt.Sprint(n))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	defer app.Shutdown()

	// The body is hidden requests, 32 bytes each, so that wherever fasthttp's read-ahead of
	// the body stops (a power of two: BodyLimit, 4 or 8 KiB) one begins.
	hidden := strings.Repeat("GET /hidn HTTP/1.1\r\nHost: xy\r\n\r\n", 660)
	for _, c := range []struct {
		path, body string
		chunked    bool
		want       string // the answers' bodies after the POST's
	}{
		{"/refuse", hidden, false, ""},      // past what fasthttp reads ahead
		{"/refuse", hidden[:64], false, ""}, // all of it read ahead: nothing hidden on the wire
		{"/refuse", hidden, true, ""},
		{"/nothing-here", hidden, false, ""},
		{"/read", hidden, false, "next"}, // read to its end: the connection goes on
	} {
		got := answersAfterPost(t, ln.Addr().String(), c.path, c.body, c.chunked)
		if got != c.want {
			t.Errorf("POST %s with %d bytes (chunked %v) of hidden requests, then GET /next on the same connection: answered %q after the POST, want %q",
				c.path, len(c.body), c.chunked, got, c.want)
		}
	}
}

// answersAfterPost sends one POST of body, then GET /next on the same connection, and
// returns the bodies of the answers after the POST's, read until the server closes it.
func answersAfterPost(t *testing.T, addr, path, body string, chunked bool) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if chunked {
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", path, len(body), body)
	} else {
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
	}
	fmt.Fprintf(conn, "GET /next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	var bodies []string
	for {
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			break
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		bodies = append(bodies, string(b))
	}
	if len(bodies) == 0 {
		t.Fatalf("POST %s: no answer", path)
	}
	return strings.Join(bodies[1:], ",")
}
