package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// healthcheck is `parla healthcheck`: it asks the server on this machine (ADDR) for
// /readyz and returns 0 when it answers ok, else 1 with the reason (the failed checks) on
// stderr. The image's HEALTHCHECK and compose use it: the slim image's /bin/sh (dash) has
// no /dev/tcp.
func healthcheck(getenv func(string) string, stderr io.Writer) int {
	addr := getenv("ADDR")
	if addr == "" {
		addr = defaultAddr
	}
	u, err := healthURL(addr)
	if err != nil {
		fmt.Fprintf(stderr, "parla healthcheck: ADDR %q: %v\n", addr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		fmt.Fprintf(stderr, "parla healthcheck: %v\n", err)
		return 1
	}
	if token := getenv("ADMIN_TOKEN"); token != "" {
		req.Header.Set("Authorization", "Bearer "+token) // the server then says why a check failed
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "parla healthcheck: %v\n", err)
		return 1
	}
	defer res.Body.Close()
	var body struct {
		OK     bool
		Failed []string
		Checks map[string]struct{ Error string }
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&body); res.StatusCode != http.StatusOK || err != nil || !body.OK {
		fmt.Fprintf(stderr, "parla healthcheck: %s answered %d (ok=%v, %v)\n", u, res.StatusCode, body.OK, err)
		for _, name := range body.Failed {
			fmt.Fprintf(stderr, "  %s failed %s\n", name, body.Checks[name].Error)
		}
		return 1
	}
	return 0
}

// healthURL is the /readyz address of a server listening on addr (":8080", "0.0.0.0:8080",
// "[::]:8080", "10.0.0.5:8080"): a wildcard host is asked on the loopback address of its
// family, any other host as it is.
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if port == "" {
		return "", fmt.Errorf("no port")
	}
	switch ip, err := netip.ParseAddr(host); {
	case host == "":
		host = "127.0.0.1"
	case err == nil && ip.IsUnspecified() && ip.Is4():
		host = "127.0.0.1"
	case err == nil && ip.IsUnspecified():
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}
