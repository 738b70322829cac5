package links

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// acceptCounter is a listener that counts the connections made to it: the proof that a
// refused link never reached its address.
type acceptCounter struct {
	ln      net.Listener
	accepts atomic.Int64
}

func listenCounting(t *testing.T, network, addr string) *acceptCounter {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil
	}
	c := &acceptCounter{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.accepts.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

func (c *acceptCounter) port() string {
	_, port, _ := net.SplitHostPort(c.ln.Addr().String())
	return port
}

// staticLookup resolves names from a table, like a DNS server the test controls.
func staticLookup(table map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		list, ok := table[host]
		if !ok {
			return nil, fmt.Errorf("no such host %s", host)
		}
		var out []netip.Addr
		for _, s := range list {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, nil
	}
}

func TestGuardRefusesHostileLinks(t *testing.T) {
	v4 := listenCounting(t, "tcp4", "127.0.0.1:0")
	if v4 == nil {
		t.Fatal("cannot listen on 127.0.0.1")
	}
	p := v4.port()
	// On ::1 with the same port when possible, so [::1] would hit a real listener.
	v6 := listenCounting(t, "tcp6", "[::1]:"+p)
	g := NewGuard(GuardConfig{LookupIP: staticLookup(map[string][]string{
		"public.test":   {"127.0.0.1"},
		"mixed.test":    {"93.184.216.34", "127.0.0.1"},
		"mapped.test":   {"::ffff:127.0.0.1"},
		"metadata.test": {"169.254.169.254"},
		"ula.test":      {"fd00:ec2::254"},
	})})
	t.Cleanup(func() { g.Close() })

	forbidden := []string{
		"http://127.0.0.1:%s/",
		"http://localhost:%s/",
		"http://LOCALHOST.:%s/",
		"http://api.localhost:%s/",
		"http://127.1:%s/",
		"http://127.0.1:%s/",
		"http://2130706433:%s/",
		"http://0x7f000001:%s/",
		"http://0X7F.1:%s/",
		"http://0177.0.0.1:%s/",
		"http://0177.0.0.01:%s/",
		"http://127.0.0.1.:%s/",
		// What the client dials is the IDNA form: fullwidth digits and letters, and the
		// ideographic full stop, map to ASCII.
		"http://１２７.０.０.１:%s/",
		"http://１２７.１:%s/",
		"http://127。0。0。1:%s/",
		"http://ｌｏｃａｌｈｏｓｔ:%s/",
		"http://localhost。:%s/",
		"http://0.0.0.0:%s/",
		"http://0:%s/",
		"http://10.0.0.1:%s/",
		"http://172.16.0.1:%s/",
		"http://192.168.1.1:%s/",
		"http://169.254.169.254:%s/latest/meta-data/",
		"http://100.64.0.1:%s/",
		"http://224.0.0.1:%s/",
		"http://255.255.255.255:%s/",
		"http://[::1]:%s/",
		"http://[::]:%s/",
		"http://[::ffff:127.0.0.1]:%s/",
		"http://[::ffff:7f00:1]:%s/",
		"http://[::127.0.0.1]:%s/",
		"http://[64:ff9b::7f00:1]:%s/",
		"http://[2002:7f00:1::]:%s/",
		"http://[2002:a9fe:a9fe::1]:%s/",
		"http://[fd00::1]:%s/",
		"http://[fd00:ec2::254]:%s/",
		"http://[fe80::1]:%s/",
		"http://[ff02::1]:%s/",
		"http://public.test:%s/",
		"http://mixed.test:%s/",
		"http://mapped.test:%s/",
		"http://metadata.test:%s/",
		"http://ula.test:%s/",
		"https://public.test:%s/",
	}
	unsupported := []string{
		"file:///etc/passwd",
		"file://127.0.0.1:%s/etc/passwd",
		"ftp://127.0.0.1:%s/x",
		"data:text/plain,hello",
		"gopher://127.0.0.1:%s/_GET",
		"dict://127.0.0.1:%s/",
		"javascript:alert(1)",
		"//127.0.0.1:%s/",
		"127.0.0.1:%s",
		"http:127.0.0.1:%s",
		"http:///etc/passwd",
		"http://user:secret@public.test:%s/",
		"http://user@93.184.216.34:%s/",
		"http://:secret@example.com:%s/",
		"http://1.2.3.256:%s/",
		"http://08.0.0.1:%s/",
		"http://1.2.3.4.5:%s/",
		"http://4294967296:%s/",
		"http://0x100000000:%s/",
		"http://0xffffffffffffffffffff:%s/",
		"http://[fe80::1%%25lo]:%s/",
		"http://exa mple.com:%s/",
		"http://..:%s/",
		"http://.example.com:%s/",
		"http://0..:%s/",
		"http://example.com..:%s/",
		"http://%%31%%32%%37.0.0.1:%s/",
		"http://93.184.216.34:0/",
		"http://93.184.216.34:99999/",
	}
	type tc struct {
		raw  string
		want error
	}
	var cases []tc
	for _, f := range forbidden {
		cases = append(cases, tc{fmt.Sprintf(f, p), ErrForbiddenAddress})
	}
	for _, f := range unsupported {
		if strings.Contains(f, "%s") {
			f = fmt.Sprintf(f, p)
		}
		cases = append(cases, tc{f, ErrUnsupportedLink})
	}
	client := g.Client()
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			// Names need DNS, so only the dial check refuses them; everything else is
			// refused by CheckURL already.
			_, err := g.CheckURL(c.raw)
			if byName := c.want == ErrForbiddenAddress && strings.Contains(c.raw, ".test:"); byName && err != nil || !byName && !errors.Is(err, c.want) {
				t.Errorf("CheckURL(%s) = %v, want %v", c.raw, err, c.want)
			}
			req, err := http.NewRequest(http.MethodGet, c.raw, nil)
			if err != nil {
				return // not even a request the client could send
			}
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET %s succeeded (%s)", c.raw, resp.Status)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("GET %s: %v, want %v", c.raw, err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error leaks the password: %v", err)
			}
		})
	}
	if n := v4.accepts.Load(); n != 0 {
		t.Errorf("%d connections reached the IPv4 listener", n)
	}
	if v6 != nil {
		if n := v6.accepts.Load(); n != 0 {
			t.Errorf("%d connections reached the IPv6 listener", n)
		}
	}
}

func TestGuardRefusesRedirectsToPrivateAddresses(t *testing.T) {
	target := listenCounting(t, "tcp4", "127.0.0.1:0")
	p := target.port()
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fine") })
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	g := NewGuard(GuardConfig{LookupIP: staticLookup(map[string][]string{
		"public.test":   {"127.0.0.1"},
		"internal.test": {"127.0.0.1"},
	})})
	t.Cleanup(func() { g.Close() })
	// The test server stands in for a public host: exactly its address and port pass the
	// dial check; the counting listener on the same IP but another port does not.
	g.exempt = netip.MustParseAddrPort(srv.Listener.Addr().String())
	_, srvPort, _ := net.SplitHostPort(srv.Listener.Addr().String())
	public := "http://public.test:" + srvPort

	resp, err := g.Client().Get(public + "/ok")
	if err != nil {
		t.Fatalf("the stand-in public server is refused, so this test proves nothing: %v", err)
	}
	resp.Body.Close()

	tests := []struct {
		to   string
		want error
	}{
		{"http://127.0.0.1:" + p + "/", ErrForbiddenAddress},
		{"http://2130706433:" + p + "/", ErrForbiddenAddress},
		{"http://[::ffff:127.0.0.1]:" + p + "/", ErrForbiddenAddress},
		{"http://localhost:" + p + "/", ErrForbiddenAddress},
		// Same IP as the stand-in, other port: resolution passes, the socket's Control refuses.
		{"http://internal.test:" + p + "/", ErrForbiddenAddress},
		{"http://169.254.169.254/latest/meta-data/", ErrForbiddenAddress},
		{"file:///etc/passwd", ErrUnsupportedLink},
		{"gopher://127.0.0.1:" + p + "/", ErrUnsupportedLink},
		{"http://user:pw@public.test:" + srvPort + "/ok", ErrUnsupportedLink},
	}
	for _, tt := range tests {
		t.Run(tt.to, func(t *testing.T) {
			before := hits.Load()
			resp, err := g.Client().Get(public + "/to?u=" + url.QueryEscape(tt.to))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("redirect to %s followed (%s)", tt.to, resp.Status)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("redirect to %s: %v, want %v", tt.to, err, tt.want)
			}
			if hits.Load() != before+1 {
				t.Fatalf("the first hop was not made, so the redirect was never tested")
			}
		})
	}
	t.Run("redirect loop", func(t *testing.T) {
		_, err := g.Client().Get(public + "/loop")
		if !errors.Is(err, ErrSourceUnreachable) {
			t.Fatalf("redirect loop: %v, want %v", err, ErrSourceUnreachable)
		}
	})
	if n := target.accepts.Load(); n != 0 {
		t.Errorf("%d connections reached the private listener", n)
	}
}

func TestGuardAllowPrivateStillChecksSchemes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	t.Cleanup(srv.Close)
	g := NewGuard(GuardConfig{AllowPrivate: true})
	t.Cleanup(func() { g.Close() })

	for _, c := range []*http.Client{g.Client(), g.StreamClient()} {
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatalf("AllowPrivate guard refused a loopback server: %v", err)
		}
		resp.Body.Close()
	}
	if _, err := NewGuard(GuardConfig{}).StreamClient().Get(srv.URL); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("StreamClient reached a loopback server: %v", err)
	}
	for _, raw := range []string{"file:///etc/passwd", "ftp://127.0.0.1/", "http://u:p@" + strings.TrimPrefix(srv.URL, "http://")} {
		if _, err := g.Client().Get(raw); !errors.Is(err, ErrUnsupportedLink) {
			t.Errorf("GET %s with AllowPrivate: %v, want %v", raw, err, ErrUnsupportedLink)
		}
	}
}

func TestGuardNoProxyFromEnvironment(t *testing.T) {
	proxy := listenCounting(t, "tcp4", "127.0.0.1:0")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:"+proxy.port())
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:"+proxy.port())
	g := NewGuard(GuardConfig{Timeout: 2 * time.Second, LookupIP: staticLookup(map[string][]string{"public.test": {"192.0.2.1"}})})
	t.Cleanup(func() { g.Close() })
	if _, err := g.Client().Get("http://public.test/"); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("GET through an environment proxy: %v, want %v", err, ErrForbiddenAddress)
	}
	if n := proxy.accepts.Load(); n != 0 {
		t.Errorf("the environment's proxy got %d connections", n)
	}
}

func TestGuardControlChecksTheSocketAddress(t *testing.T) {
	g := NewGuard(GuardConfig{})
	for _, addr := range []string{"127.0.0.1:80", "[::1]:443", "[::ffff:10.0.0.1]:80", "169.254.169.254:80"} {
		if err := g.control("tcp", addr, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("control(%s) = %v, want %v", addr, err, ErrForbiddenAddress)
		}
	}
	if err := g.control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("control(public) = %v", err)
	}
}

// CountBytes hears every body byte read through the clients and through the relay.
func TestGuardCountsBytesRead(t *testing.T) {
	body := strings.Repeat("x", 3000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	var counted atomic.Int64
	g := NewGuard(GuardConfig{AllowPrivate: true, CountBytes: func(n int64) { counted.Add(n) }})
	t.Cleanup(func() { g.Close() })
	resp, err := g.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n := counted.Load(); n != 3000 {
		t.Fatalf("counted %d bytes through the client, want 3000", n)
	}
	u, _ := url.Parse(srv.URL + "/video.mp4")
	rl, err := g.Relay(context.Background(), u, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	resp, err = http.Get(rl.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n := counted.Load(); n != 6000 || rl.Stats.BytesRead() != 3000 {
		t.Errorf("counted %d bytes after the relay (relay read %d), want 6000", n, rl.Stats.BytesRead())
	}
}
