package links

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults for GuardConfig.
const (
	defaultMaxRedirects = 5
	defaultFetchTimeout = 30 * time.Second
	// A two-hour 1080p video is about 4 GB; the whole file passes through when its audio is
	// extracted, so the cap is set just above that.
	defaultMaxBytes int64 = 4 << 30
)

// GuardConfig says how far a visitor's link may take the server.
type GuardConfig struct {
	// AllowPrivate lifts the address check (loopback, private, link-local…), for tests and
	// for operators who really mean to read media from their own network. Schemes and user
	// info are still checked.
	AllowPrivate bool
	// MaxRedirects bounds the redirects followed per request. 0 means 5; negative means none.
	MaxRedirects int
	// Timeout bounds each request: Client's requests as a whole; for StreamClient and the
	// relay, connecting, the wait for response headers and (relay) any pause in the body.
	// Default 30 s.
	Timeout time.Duration
	// MaxBytes caps what the relay reads from one target over all its requests. Default 4 GiB.
	MaxBytes int64
	// LookupIP resolves a host name; nil uses the system resolver. Every answer is checked
	// before and again at dial time. Tests use it to make a public-looking name answer with
	// a private address.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Guard fetches visitors' links without letting them reach the server's own network: only
// http(s), no user info, and every connection — first request, redirect, DNS answer — is
// checked against the address it actually dials. It is safe for concurrent use; build one
// in main.go and Close it on shutdown (it may own the relay listener).
type Guard struct {
	cfg       GuardConfig
	transport *http.Transport
	// exempt lets exactly one address through the dial check. Tests only: it stands in for a
	// public server that redirects to a private one.
	exempt netip.AddrPort

	relayMu sync.Mutex
	relay   *relayServer
}

// NewGuard returns a Guard for cfg, filling in defaults.
func NewGuard(cfg GuardConfig) *Guard {
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = defaultMaxRedirects
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultFetchTimeout
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = defaultMaxBytes
	}
	g := &Guard{cfg: cfg}
	g.transport = &http.Transport{
		// Never a proxy, and never one from the environment: the proxy would make the
		// connection on our behalf, past the dial check.
		Proxy:                 nil,
		DialContext:           g.dial,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   4,
	}
	return g
}

// Client returns an http.Client that refuses forbidden links, redirects and addresses.
// Each request as a whole is bounded by GuardConfig.Timeout.
func (g *Guard) Client() *http.Client {
	return g.client(g.cfg.Timeout)
}

// StreamClient is Client without the overall timeout, for downloads that may rightly take
// longer (a site's audio stream): bound them with a context. Connecting and the wait for
// response headers are still bounded by GuardConfig.Timeout.
func (g *Guard) StreamClient() *http.Client {
	return g.client(0)
}

// client returns a guarded client with the given overall timeout (0: none, for streams).
func (g *Guard) client(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport:     checkedTransport{g: g, next: g.transport},
		CheckRedirect: g.checkRedirect,
		Timeout:       timeout,
	}
}

// checkedTransport runs CheckURL on every request, so a client built on it cannot be used
// with a link that never went through CheckURL.
type checkedTransport struct {
	g    *Guard
	next http.RoundTripper
}

func (t checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, err := t.g.CheckURL(req.URL.String()); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.next.RoundTrip(req)
}

func (g *Guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if g.cfg.MaxRedirects < 0 || len(via) > g.cfg.MaxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrSourceUnreachable, max(g.cfg.MaxRedirects, 0))
	}
	if _, err := g.CheckURL(req.URL.String()); err != nil {
		return fmt.Errorf("redirect: %w", err)
	}
	return nil
}

// Close stops the relay listener, if one was started.
func (g *Guard) Close() error {
	g.relayMu.Lock()
	defer g.relayMu.Unlock()
	g.transport.CloseIdleConnections()
	if g.relay == nil {
		return nil
	}
	err := g.relay.close()
	g.relay = nil
	return err
}

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
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%w: bad port %q", ErrUnsupportedLink, port)
		}
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// checkHost validates a URL's host name and returns its canonical form.
func (g *Guard) checkHost(host string) (string, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
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

// validHostName accepts DNS names (letters, digits, '-', '_', '.') and non-ASCII labels,
// which the HTTP client turns into punycode.
func validHostName(host string) bool {
	for i := 0; i < len(host); i++ {
		c := host[i]
		ok := c >= 0x80 || c == '-' || c == '_' || c == '.' ||
			(c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return !strings.Contains(host, "..")
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
		_, err := strconv.ParseUint("0"+rest, 16, 64)
		return err == nil
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
// carry an IPv4 address (mapped, compatible, 6to4, NAT64) are judged by that address.
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
	nat64Prefix  = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour    = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address an IPv6 address routes to, for the forms that embed one.
func embeddedIPv4(addr netip.Addr) (netip.Addr, bool) {
	if !addr.Is6() {
		return netip.Addr{}, false
	}
	b := addr.As16()
	switch {
	case compatPrefix.Contains(addr), nat64Prefix.Contains(addr):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(addr):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// dial resolves the host itself, refuses when any answer is forbidden, and dials the
// addresses one by one; the dialer's Control checks the socket's real peer again.
func (g *Guard) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: g.cfg.Timeout, Control: g.control}
	var errs []error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		if errors.Is(err, ErrForbiddenAddress) {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("%w: connecting to %s: %w", ErrSourceUnreachable, host, errors.Join(errs...))
}

// resolve returns host's addresses, all of them allowed.
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{addr}, g.checkDial(host, netip.AddrPortFrom(addr, 0))
	}
	lookup := g.cfg.LookupIP
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("%w: resolving %s: %w", ErrSourceUnreachable, host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: %s has no address", ErrSourceUnreachable, host)
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
		// One forbidden answer condemns the name: a public host never has a private address.
		if err := g.checkDial(host, netip.AddrPortFrom(addrs[i], 0)); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// control runs on the socket before it connects: the last word on the peer address.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read dial address %q", ErrForbiddenAddress, address)
	}
	return g.checkDial(ap.Addr().String(), ap)
}

// checkDial is checkAddr with the test exemption; port 0 matches on the address alone.
func (g *Guard) checkDial(host string, ap netip.AddrPort) error {
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if g.exempt.IsValid() && ap.Addr() == g.exempt.Addr() && (ap.Port() == 0 || ap.Port() == g.exempt.Port()) {
		return nil
	}
	return g.checkAddr(host, ap.Addr())
}
