package api

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// One client is one IPv4 address or one IPv6 /64 for every visitor limit: forty session
// look-ups from forty addresses of one /64 meet the limit as forty from one IPv4 address do
// (RATE_LIMIT 10: 30 refused), and the next /64 has a budget of its own.
func TestOneIPv6Slash64IsOneClient(t *testing.T) {
	// app.Test's requests come from 0.0.0.0: the proxy that names the client.
	app := New(Config{RateLimit: 10, TrustedProxies: []string{"0.0.0.0"}}, Deps{})
	refused := func(from func(i int) string) int {
		n := 0
		for i := range 40 {
			req := httptest.NewRequest("GET", "/payment/tts/checkout-session", nil)
			req.Header.Set("X-Forwarded-For", from(i))
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == 429 {
				n++
			}
		}
		return n
	}
	for name, from := range map[string]func(int) string{
		"one IPv4 address":           func(int) string { return "198.51.100.7" },
		"forty addresses of one /64": func(i int) string { return fmt.Sprintf("2001:db8:1:2:%x::%x", i, i+1) },
		"forty hosts of another /64": func(i int) string { return fmt.Sprintf("2001:db8:5:6::%x", i+1) },
	} {
		if got := refused(from); got != 30 {
			t.Errorf("%s: %d of 40 refused, want 30", name, got)
		}
	}
	if got := refused(func(i int) string { return fmt.Sprintf("2001:db8:1:3::%x", i+1) }); got != 30 {
		t.Errorf("the next /64: %d of 40 refused, want 30 (a budget of its own)", got)
	}
}

// The connection cap counts an IPv6 /64 as one client too.
func TestListenerCapsAnIPv6Slash64(t *testing.T) {
	var conns []*fakeConn
	var script []any
	for i := range 3 {
		c := &fakeConn{from: fmt.Sprintf("[2001:db8:1:2::%x]:80", i+1)}
		conns = append(conns, c)
		script = append(script, c)
	}
	l := NewListener(&scriptedListener{script: script}, 2, nil)
	l.Accept()
	l.Accept()
	l.Accept() // the third address of the /64: over the cap, closed
	if !conns[2].closed {
		t.Error("a third connection from one /64 was kept (cap 2)")
	}
	if n := l.Open(netip.MustParseAddr("2001:db8:1:2:ffff::9")); n != 2 {
		t.Errorf("open for the /64 = %d, want 2", n)
	}
}

// A flood of new addresses never resets anyone's render bucket: a client that spent its
// minute stays refused while 10,000+ other addresses ask once each; the flood's latecomers
// share one bucket; the spent client is served again once its minute has passed.
func TestRenderBucketSurvivesAFloodOfAddresses(t *testing.T) {
	var rc renderCache
	now := time.Unix(1_700_000_000, 0)
	const limit = 4
	for i := range limit {
		if !rc.allow("203.0.113.9", limit, now) {
			t.Fatalf("request %d within the limit refused", i+1)
		}
	}
	if rc.allow("203.0.113.9", limit, now) {
		t.Fatal("a request past the limit allowed")
	}
	allowed := 0
	for i := range renderBucketClients + 500 {
		if rc.allow(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), limit, now.Add(time.Second)) {
			allowed++
		}
	}
	if rc.allow("203.0.113.9", limit, now.Add(2*time.Second)) {
		t.Error("after a flood of 10,500 addresses the spent client was allowed again within its minute")
	}
	// The table held 10,000 clients (the spent one among them); the rest shared a bucket.
	if want := renderBucketClients - 1 + limit; allowed != want {
		t.Errorf("%d of the flood's requests allowed, want %d", allowed, want)
	}
	if !rc.allow("203.0.113.9", limit, now.Add(time.Minute)) {
		t.Error("the spent client is still refused once its minute has passed")
	}
	if !rc.allow("192.0.2.1", limit, now.Add(time.Minute+time.Second)) {
		t.Error("a new client is refused after the flood's minute has passed")
	}
}

// A request with X-Forwarded-For from a peer TRUSTED_PROXIES does not name is warned of
// once (behind such a proxy every visitor is one client); none from a trusted proxy, none
// without the header.
func TestUntrustedProxyIsWarnedOfOnce(t *testing.T) {
	const warning = "X-Forwarded-For from a peer TRUSTED_PROXIES does not name"
	send := func(trusted []string, headers ...string) string {
		var logs bytes.Buffer
		app := New(Config{TrustedProxies: trusted}, Deps{Log: slog.New(slog.NewTextHandler(&logs, nil))})
		for _, xff := range headers {
			req := httptest.NewRequest("GET", "/healthz", nil)
			if xff != "" {
				req.Header.Set("X-Forwarded-For", xff)
			}
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		return logs.String()
	}
	if got := strings.Count(send(nil, "198.51.100.4", "198.51.100.5", "203.0.113.1"), warning); got != 1 {
		t.Errorf("TRUSTED_PROXIES empty, three proxied requests: warned %d times, want once", got)
	}
	if got := send(nil, ""); strings.Contains(got, warning) {
		t.Errorf("no X-Forwarded-For: warned: %s", got)
	}
	// app.Test's requests come from 0.0.0.0.
	if got := send([]string{"0.0.0.0"}, "198.51.100.4"); strings.Contains(got, warning) {
		t.Errorf("from a trusted proxy: warned: %s", got)
	}
}
