package api

import (
	"net"
	"net/netip"
	"testing"

	"parla/api/orders"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

func TestClientIPTakesTheRightmostUntrustedHop(t *testing.T) {
	trusted := trustedNets([]string{"10.0.0.0/8", "192.0.2.7"})
	tests := []struct {
		name, remote, xff, want string
	}{
		{"no proxy configured for this peer", "203.0.113.9", "1.2.3.4", "203.0.113.9"},
		{"trusted proxy, one hop", "10.0.0.2", "198.51.100.4", "198.51.100.4"},
		{"client forges a leftmost address", "10.0.0.2", "6.6.6.6, 198.51.100.4", "198.51.100.4"},
		{"two trusted proxies", "10.0.0.2", "6.6.6.6, 198.51.100.4, 192.0.2.7", "198.51.100.4"},
		{"only trusted hops", "10.0.0.2", "10.1.1.1, 192.0.2.7", "10.0.0.2"},
		{"no header", "10.0.0.2", "", "10.0.0.2"},
		{"garbage hop", "10.0.0.2", "6.6.6.6, not-an-ip", "10.0.0.2"},
		{"IPv4-mapped peer", "::ffff:10.0.0.2", "198.51.100.4", "198.51.100.4"},
		{"IPv6 client", "10.0.0.2", "2001:db8::1", "2001:db8::1"},
	}
	for _, tt := range tests {
		got := clientIP(netip.MustParseAddr(tt.remote), tt.xff, trusted)
		if got != tt.want {
			t.Errorf("%s: clientIP(%s, %q) = %s, want %s", tt.name, tt.remote, tt.xff, got, tt.want)
		}
	}
}

// A trusted proxy that adds its own X-Forwarded-For line after the visitor's (HAProxy's
// option forwardfor) makes two header lines: the client is the rightmost untrusted hop of
// both, not whatever the visitor wrote on the first.
func TestClientIPReadsEveryForwardedForLine(t *testing.T) {
	app := fiber.New()
	fctx := &fasthttp.RequestCtx{}
	fctx.SetRemoteAddr(&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 4000})
	fctx.Request.Header.Add("X-Forwarded-For", "203.0.113.9")
	fctx.Request.Header.Add("X-Forwarded-For", "198.51.100.7")
	c := app.AcquireCtx(fctx)
	defer app.ReleaseCtx(c)
	if got := ClientIP([]string{"127.0.0.1"})(c); got != "198.51.100.7" {
		t.Errorf("two X-Forwarded-For lines: client %s, want 198.51.100.7 (the proxy's own line)", got)
	}
}

// Unpaid uploads are counted per IPv4 address, and per /64 for IPv6: one host has its
// whole /64 to pick addresses from.
func TestQuotaKey(t *testing.T) {
	for ip, want := range map[string]string{
		"198.51.100.4":             "198.51.100.4",
		"2001:db8:1:2:3:4:5:6":     "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1":     "2001:db8:1:2::/64",
		"2001:db8:1:3::1":          "2001:db8:1:3::/64",
		"::1":                      "::/64",
		"not an address (a fluke)": "not an address (a fluke)",
	} {
		if got := orders.ClientKey(ip); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", ip, got, want)
		}
	}
}
