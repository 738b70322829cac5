package v1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// A call's work learns at once that its client hung up (errClientGone), and a client that
// waits gets its answer, its call's context never ended by the watch.
func TestWatchClientEndsTheWorkWhenTheClientHangsUp(t *testing.T) {
	ended := make(chan error, 1)
	app := fiber.New(fiber.Config{ReadTimeout: time.Second, DisableStartupMessage: true})
	app.Get("/work", func(c *fiber.Ctx) error {
		ctx, stop := watchClient(context.Background(), c)
		defer stop()
		select {
		case <-ctx.Done():
			ended <- context.Cause(ctx)
		case <-time.After(3 * time.Second): // past the ReadTimeout: the watch has no deadline
			ended <- nil
		}
		return c.SendString("done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	defer app.Shutdown()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /work HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(200 * time.Millisecond)
	conn.Close()
	select {
	case cause := <-ended:
		if !errors.Is(cause, errClientGone) {
			t.Errorf("a client that hung up: the work ended with %v, want errClientGone", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the work did not learn that its client hung up")
	}

	conn, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /work HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("a client that waited: %v %v", res, err)
	}
	if cause := <-ended; cause != nil {
		t.Errorf("a client that waited: the work ended early with %v", cause)
	}
}
