package links

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// URL and address checks. They read a URL or an address and never touch the network; the
// dialer in guard.go applies them again to every address it actually dials.

// CheckURL parses raw and returns it normalised, or an error wrapping ErrUnsupportedLink
// (not http/https, user info, no host, malformed numeric host) or ErrForbiddenAddress (a
// literal address or a name such as localhost that is never public). Numeric hosts are read
// the way browsers and inet_aton read them (127.1, 2130706433, 0x7f000001, 0177.0.0.1) and
// rewritten in canonical form. Names are not resolved here: the dial check does that.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: not a URL", ErrUnsupportedLink)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: scheme %q is not http or https", ErrUnsupportedLink, u.Scheme)
	}
	if u.Opaque != "" {
		return nil, fmt.Errorf("%w: no host", ErrUnsupportedLink)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: links with a user name or password are not accepted", ErrUnsupportedLink)
	}
	host, err := g.checkHost(u.Hostname())
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%w: bad port %q", ErrUnsupportedLink, port)
		}
		// The port the client dials, written once way: "01" and "1" are one port.
		host = net.JoinHostPort(host, strconv.Itoa(n))
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// checkHost validates a URL's host name and returns its canonical form.
func (g *Guard) checkHost(host string) (string, error) {
	host = strings.ToLower(host)
	if !isASCII(host) {
		// The HTTP client connects to the IDNA (UTS #46) form of a non-ASCII host, in which
		// fullwidth digits and letters and the ideographic full stop are ASCII: "１２７.１" is
		// 127.1 and "ｌｏｃａｌｈｏｓｔ" is localhost. Judge, and return, that form.
		ascii, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return "", fmt.Errorf("%w: bad host name", ErrUnsupportedLink)
		}
		host = ascii
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return "", fmt.Errorf("%w: no host", ErrUnsupportedLink)
	}
	addr, numeric, err := parseNumericHost(host)
	if err != nil {
		return "", err
	}
	if numeric {
		if err := g.checkAddr(host, addr); err != nil {
			return "", err
		}
		return addr.String(), nil
	}
	if !validHostName(host) {
		return "", fmt.Errorf("%w: bad host name", ErrUnsupportedLink)
	}
	if !g.cfg.AllowPrivate && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
		return "", fmt.Errorf("%w: %s", ErrForbiddenAddress, host)
	}
	return host, nil
}

// validHostName accepts DNS names (letters, digits, '-', '_', '.'; non-ASCII names arrive
// in punycode). Every label is non-empty (a trailing dot was trimmed before).
func validHostName(host string) bool {
	for i := 0; i < len(host); i++ {
		c := host[i]
		ok := c == '-' || c == '_' || c == '.' ||
			(c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return !strings.HasPrefix(host, ".") && !strings.HasSuffix(host, ".") && !strings.Contains(host, "..")
}

// parseNumericHost reads host as an IP address when it is one. IPv6 must be plain (no zone).
// A host whose last label is a number is an IPv4 address to browsers and to inet_aton, so it
// is read their way — 1 to 4 parts, each decimal, octal (leading 0) or hex (0x) — and a
// malformed one is refused rather than sent to DNS.
func parseNumericHost(host string) (netip.Addr, bool, error) {
	if strings.Contains(host, ":") {
		addr, err := netip.ParseAddr(host)
		if err != nil || addr.Zone() != "" {
			return netip.Addr{}, false, fmt.Errorf("%w: bad IPv6 address", ErrUnsupportedLink)
		}
		return addr, true, nil
	}
	parts := strings.Split(host, ".")
	if !numericPart(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil
	}
	addr, ok := inetAton(parts)
	if !ok {
		return netip.Addr{}, false, fmt.Errorf("%w: bad IPv4 address", ErrUnsupportedLink)
	}
	return addr, true, nil
}

// numericPart reports whether s is written as a number (decimal digits, or 0x and hex digits).
func numericPart(s string) bool {
	if s == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(s, "0x"); ok {
		// Any length: a hex number too big for an address is a malformed address, not a name.
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(s, "0123456789") == ""
}

// inetAton reads an IPv4 address the way inet_aton(3) and the WHATWG URL parser do: with
// n parts, the first n-1 are bytes and the last fills the remaining bytes.
func inetAton(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := atonPart(p)
		last := i == len(parts)-1
		limit := uint64(255)
		if last {
			limit = 1<<(8*(5-len(parts))) - 1
		}
		if !ok || n > limit {
			return netip.Addr{}, false
		}
		if last {
			v = v<<(8*(5-len(parts))) | n
		} else {
			v = v<<8 | n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func atonPart(p string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	if p == "" || strings.ContainsAny(p, "+-_") {
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// checkAddr refuses addr unless the guard allows private addresses.
func (g *Guard) checkAddr(host string, addr netip.Addr) error {
	if g.cfg.AllowPrivate {
		return nil
	}
	if reason := forbiddenReason(addr); reason != "" {
		if host == addr.String() {
			return fmt.Errorf("%w: %s (%s)", ErrForbiddenAddress, host, reason)
		}
		return fmt.Errorf("%w: %s is %s (%s)", ErrForbiddenAddress, host, addr.Unmap(), reason)
	}
	return nil
}

// A forbidden range and why.
type addrRange struct {
	prefix netip.Prefix
	reason string
}

var forbiddenRanges = func() []addrRange {
	list := []struct{ cidr, reason string }{
		{"0.0.0.0/8", "unspecified"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared address space"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local or cloud metadata"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol assignments"},
		{"192.0.2.0/24", "documentation"},
		{"192.88.99.0/24", "6to4 relay"},
		{"192.168.0.0/16", "private"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved or broadcast"},
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"64:ff9b:1::/48", "local NAT64"},
		{"100::/64", "discard"},
		{"2001::/32", "Teredo"},
		{"2001:db8::/32", "documentation"},
		{"fc00::/7", "unique local or cloud metadata"},
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local"},
		{"ff00::/8", "multicast"},
	}
	out := make([]addrRange, len(list))
	for i, r := range list {
		out[i] = addrRange{netip.MustParsePrefix(r.cidr), r.reason}
	}
	return out
}()

// forbiddenReason says why addr must not be dialled, or "" when it may. IPv6 forms that
// carry an IPv4 address (mapped, compatible, translated, 6to4, NAT64) are judged by that
// address.
func forbiddenReason(addr netip.Addr) string {
	addr = addr.Unmap().WithZone("")
	for _, r := range forbiddenRanges {
		if r.prefix.Contains(addr) {
			return r.reason
		}
	}
	if v4, ok := embeddedIPv4(addr); ok {
		if reason := forbiddenReason(v4); reason != "" {
			return reason + " inside IPv6"
		}
	}
	return ""
}

var (
	compatPrefix = netip.MustParsePrefix("::/96")
	// IPv4-translated addresses (RFC 2765, SIIT): ::ffff:0:a.b.c.d.
	translatedPrefix = netip.MustParsePrefix("::ffff:0:0:0/96")
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour        = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address an IPv6 address routes to, for the forms that embed one.
func embeddedIPv4(addr netip.Addr) (netip.Addr, bool) {
	if !addr.Is6() {
		return netip.Addr{}, false
	}
	b := addr.As16()
	switch {
	case compatPrefix.Contains(addr), translatedPrefix.Contains(addr), nat64Prefix.Contains(addr):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(addr):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}
