package testkit

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"
)

// stripeMockStartTimeout bounds how long stripe-mock may take to load its OpenAPI spec and
// answer (it takes about a second).
const stripeMockStartTimeout = 30 * time.Second

// StartStripeMock starts the real stripe-mock binary on a loopback port the system picks,
// waits until it answers an API request, and returns its base URL (http://127.0.0.1:port).
// The process is killed when the test ends. stripe-mock is stateless: it validates
// requests against Stripe's OpenAPI spec and answers with fixtures.
func StartStripeMock(t testing.TB) string {
	t.Helper()
	bin := Binary(t, "stripe-mock")

	ctx, cancel := context.WithCancel(context.Background())
	// Both listeners are given an explicit loopback address with port 0: with only the HTTP
	// one set, stripe-mock still opens HTTPS on :12112 for all interfaces, and parallel test
	// packages would fight over it. The chosen port is read from its startup line.
	cmd := exec.CommandContext(ctx, bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatalf("stripe-mock: %v", err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting stripe-mock: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait() // killed on purpose; its exit status says nothing
	})

	addrc := make(chan string, 1)
	go func() {
		const prefix = "Listening for HTTP at address: "
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, prefix) {
				addrc <- strings.TrimSpace(strings.TrimPrefix(line, prefix))
				break
			}
		}
		// Keep draining so stripe-mock never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, stdout)
	}()

	var base string
	select {
	case addr := <-addrc:
		base = "http://" + addr
	case <-time.After(stripeMockStartTimeout):
		t.Fatalf("stripe-mock did not report its HTTP address within %s; stderr: %s", stripeMockStartTimeout, stderr.String())
	}

	// The listener is open before the line is printed; one real request proves it serves.
	deadline := time.Now().Add(stripeMockStartTimeout)
	for {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/balance", nil)
		req.SetBasicAuth("sk_test_123", "")
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return base
			}
			err = &statusError{res.Status}
		}
		if time.Now().After(deadline) {
			t.Fatalf("stripe-mock at %s does not answer: %v; stderr: %s", base, err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type statusError struct{ status string }

func (e *statusError) Error() string { return "status " + e.status }

// lockedBuffer collects a child's stderr for error messages; the child writes from another
// goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 { // enough to explain a failure
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// SignPayload returns a Stripe-Signature header value for payload signed with secret at
// time t, exactly as Stripe signs webhook deliveries (v1: HMAC-SHA256 over "t.payload").
// Tests use it to send webhooks the app must accept.
func SignPayload(payload []byte, secret string, t time.Time) string {
	sig := webhook.ComputeSignature(t, payload, secret)
	return fmt.Sprintf("t=%d,v1=%s", t.Unix(), hex.EncodeToString(sig))
}
