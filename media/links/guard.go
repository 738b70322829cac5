package links

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
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
	// CountBytes, when set, is told of every body byte read from a visitor's link through
	// the Guard's clients and relay (metrics). It must be quick and safe for concurrent use.
	CountBytes func(n int64)
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
	resp, err := t.next.RoundTrip(req)
	if err == nil && t.g.cfg.CountBytes != nil && resp.Body != nil {
		resp.Body = countedBody{resp.Body, t.g.cfg.CountBytes}
	}
	return resp, err
}

// countedBody tells CountBytes of what is read from a response body.
type countedBody struct {
	io.ReadCloser
	count func(int64)
}

func (b countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.count(int64(n))
	}
	return n, err
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
