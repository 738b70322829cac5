package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealthURL(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{":8080", "http://127.0.0.1:8080/readyz"},
		{"0.0.0.0:9000", "http://127.0.0.1:9000/readyz"},
		{"[::]:8080", "http://[::1]:8080/readyz"},
		{"127.0.0.2:8080", "http://127.0.0.2:8080/readyz"},
		{"[::1]:81", "http://[::1]:81/readyz"},
		{"localhost:8080", "http://localhost:8080/readyz"},
	} {
		if got, err := healthURL(c.addr); err != nil || got != c.want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", c.addr, got, err, c.want)
		}
	}
	for _, bad := range []string{"8080", "", "host:", "[::1"} {
		if got, err := healthURL(bad); err == nil {
			t.Errorf("healthURL(%q) = %q, want an error", bad, got)
		}
	}
}

// The subcommand passes against the real server and fails, saying why, against a port
// nobody listens on and against a server that answers something else.
func TestHealthcheckSubcommand(t *testing.T) {
	h := startApp(t, nil)
	env := func(addr string) func(string) string {
		return func(k string) string {
			if k == "ADDR" {
				return addr
			}
			return ""
		}
	}
	var stderr bytes.Buffer
	if code := healthcheck(env(strings.TrimPrefix(h.base, "http://")), &stderr); code != 0 {
		t.Fatalf("against the running server: exit %d: %s", code, stderr.String())
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	stderr.Reset()
	if code := healthcheck(env(closed), &stderr); code != 1 || !strings.Contains(stderr.String(), "refused") {
		t.Errorf("against a closed port: exit %d: %s", code, stderr.String())
	}

	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	defer other.Close()
	stderr.Reset()
	if code := healthcheck(env(strings.TrimPrefix(other.URL, "http://")), &stderr); code != 1 || !strings.Contains(stderr.String(), "503") {
		t.Errorf("against a server answering 503: exit %d: %s", code, stderr.String())
	}
}
