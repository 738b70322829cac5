package api

import (
	"log/slog"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
)

// trustedNets parses TRUSTED_PROXIES (IPs and CIDRs, checked at boot) into prefixes.
func trustedNets(proxies []string) []netip.Prefix {
	var nets []netip.Prefix
	for _, p := range proxies {
		if pfx, err := netip.ParsePrefix(p); err == nil {
			nets = append(nets, pfx.Masked())
		} else if a, err := netip.ParseAddr(p); err == nil {
			nets = append(nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	return nets
}

// clientIP is the address a request is counted under for rate limits. X-Forwarded-For is
// believed only from a trusted proxy, and then read from the right: each trusted hop
// appends the address it saw, so the rightmost address that is not a trusted proxy is the
// client; anything to its left was written by the client and could be anything.
func clientIP(remote netip.Addr, forwardedFor string, trusted []netip.Prefix) string {
	remote = remote.Unmap()
	if !isTrusted(remote, trusted) || forwardedFor == "" {
		return remote.String()
	}
	hops := strings.Split(forwardedFor, ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return remote.String() // a hop we cannot read: count the proxy that sent it
		}
		if a = a.Unmap(); !isTrusted(a, trusted) {
			return a.String()
		}
	}
	return remote.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientIP returns the function that names a request's client by its full address,
// believing X-Forwarded-For only from the trusted proxies (for the admin area's audit log;
// its limits key the address with orders.ClientKey, as ClientKeyOf does).
func ClientIP(trustedProxies []string) func(c *fiber.Ctx) string {
	trusted := trustedNets(trustedProxies)
	return func(c *fiber.Ctx) string {
		remote, _ := netip.AddrFromSlice(c.Context().RemoteIP())
		// Every X-Forwarded-For line, joined: a proxy that adds its own line after the
		// visitor's (HAProxy's option forwardfor) would otherwise leave c.Get the visitor's
		// own, written to look like another client on every request.
		var lines []string
		for _, v := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
			lines = append(lines, string(v))
		}
		return clientIP(remote, strings.Join(lines, ","), trusted)
	}
}

// ClientKeyOf returns the function that names a request's client as every visitor limit
// counts it: ClientIP's address as orders.ClientKey keys it (an IPv4 address, or an IPv6
// /64), so forty addresses of one /64 are one client.
func ClientKeyOf(trustedProxies []string) func(c *fiber.Ctx) string {
	ip := ClientIP(trustedProxies)
	return func(c *fiber.Ctx) string { return orders.ClientKey(ip(c)) }
}

// untrustedProxyWarning logs once, at the first request that carries X-Forwarded-For from
// a peer TRUSTED_PROXIES does not name: behind such a proxy (TRUSTED_PROXIES empty behind
// Caddy, say) every visitor is the proxy's address, one client for every limit. A private
// or loopback peer is named (a proxy of ours); a public one is not (it may be a visitor
// writing the header itself).
func untrustedProxyWarning(trustedProxies []string, log *slog.Logger) func(c *fiber.Ctx) error {
	trusted := trustedNets(trustedProxies)
	var warned atomic.Bool
	return func(c *fiber.Ctx) error {
		if warned.Load() || len(c.Request().Header.Peek(fiber.HeaderXForwardedFor)) == 0 {
			return c.Next()
		}
		remote, _ := netip.AddrFromSlice(c.Context().RemoteIP())
		if remote = remote.Unmap(); isTrusted(remote, trusted) || !warned.CompareAndSwap(false, true) {
			return c.Next()
		}
		peer := "a public address (not logged)"
		if remote.IsLoopback() || remote.IsPrivate() {
			peer = remote.String()
		}
		log.Warn("a request carried X-Forwarded-For from a peer TRUSTED_PROXIES does not name: "+
			"if it is your proxy, every visitor behind it counts as one client for the rate limits "+
			"and quotas; add its address to TRUSTED_PROXIES (said once)", "peer", peer)
		return c.Next()
	}
}
