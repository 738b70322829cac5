package api

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"parla/providers/testkit"
)

func TestWatchConnEndsWhenTheVisitorLeaves(t *testing.T) {
	server, client := net.Pipe()
	ctx, stop := watchConn(context.Background(), server)
	client.Close()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context outlived the connection")
	}
	if stop() {
		t.Error("nothing was sent, yet a byte was taken")
	}
}

func TestWatchConnStopsCleanly(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	ctx, stop := watchConn(context.Background(), server)
	time.Sleep(50 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatal("ended while the visitor waits")
	}
	if stop() {
		t.Error("a byte was taken")
	}
	// The connection reads on afterwards: the watch left it as it was.
	go client.Write([]byte("GET"))
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 3)
	if n, err := server.Read(buf); err != nil || string(buf[:n]) != "GET" {
		t.Fatalf("read after the watch: %q, %v", buf[:n], err)
	}
	// A client that sends its next request early: the byte is taken and stop says so.
	ctx, stop = watchConn(context.Background(), server)
	// net.Pipe's Write returns once the byte is read: the watch has taken it.
	var taken atomic.Bool
	go func() {
		if _, err := client.Write([]byte("P")); err == nil {
			taken.Store(true)
		}
	}()
	if !testkit.WaitFor(5*time.Second, taken.Load) {
		t.Fatal("the watch did not take the byte sent early")
	}
	// The visitor is still there: the byte does not end the watch's context, stop does.
	if ctx.Err() != nil {
		t.Error("a byte sent early ended the context, as if the visitor had left")
	}
	if !stop() || ctx.Err() == nil {
		t.Error("a pipelined byte went unnoticed")
	}
}
