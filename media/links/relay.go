package links

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The relay is how ffmpeg and ffprobe read a visitor's link without ever being given it.
// They only get http://127.0.0.1:<port>/t/<token>/media.<ext>; the relay forwards each of
// their GET/HEAD requests (with its Range header, so analysis reads kilobytes) through the
// guarded client and streams the answer back. The token is 256 random bits, so no other
// local process can use the relay, and it stops working when its Relayed is closed.
//
// This file holds the server and its tokens; relaywindows.go answers ranged reads and
// relaystats.go copies bodies and counts what each target cost.

// Relayed is one link made readable on the loopback relay.
type Relayed struct {
	// URL is the loopback URL to hand to ffmpeg or ffprobe.
	URL string
	// Stats counts the bytes and requests sent to the source.
	Stats *RelayStats

	close func()
}

// Close makes URL unusable and cancels the requests still running for it.
func (r *Relayed) Close() { r.close() }

// Relay makes target readable at a loopback URL until the Relayed is closed or ctx ends.
// The relay reads at most limit bytes from the source in all (0: GuardConfig.MaxBytes).
// target should come from CheckURL; every request is checked again anyway.
func (g *Guard) Relay(ctx context.Context, target *url.URL, limit int64) (*Relayed, error) {
	return g.relayAnswering(ctx, target, limit, 0)
}

// relayAnswering is Relay whose source must answer each request (its headers) within answerWithin
// (0: GuardConfig.Timeout, as any request), or the relay reports it unreachable.
func (g *Guard) relayAnswering(ctx context.Context, target *url.URL, limit int64, answerWithin time.Duration) (*Relayed, error) {
	srv, err := g.relayServer()
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = g.cfg.MaxBytes
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	t := &relayTarget{ctx: ctx, url: target.String(), host: target.Hostname(), limit: limit, stats: &RelayStats{},
		answerWithin: answerWithin}
	t.stats.length.Store(-1)
	srv.add(token, t)
	return &Relayed{
		URL:   srv.base + "/t/" + token + "/" + relayName(target.Path),
		Stats: t.stats,
		close: func() { srv.remove(token); cancel() },
	}, nil
}

// relayName is the last path element of the relay URL: "media" plus the source's file
// extension, which ffmpeg uses as a hint when probing raw streams (.aac, .mp3).
func relayName(sourcePath string) string {
	ext := strings.ToLower(path.Ext(sourcePath))
	if safeExt.MatchString(ext) {
		return "media" + ext
	}
	return "media"
}

var safeExt = regexp.MustCompile(`^\.[a-z0-9]{1,5}$`)

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making a relay token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// relayServer returns the Guard's relay, starting it on first use.
func (g *Guard) relayServer() (*relayServer, error) {
	g.relayMu.Lock()
	defer g.relayMu.Unlock()
	if g.relay != nil {
		return g.relay, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the media relay: %w", err)
	}
	s := &relayServer{
		base:    "http://" + ln.Addr().String(),
		client:  g.client(0),
		idle:    g.cfg.Timeout,
		targets: map[string]*relayTarget{},
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(smallSendBuffers{ln})
	g.relay = s
	return s, nil
}

// relaySendBuffer is the socket send buffer towards ffmpeg. The kernel would otherwise grow
// it to megabytes on loopback, and whatever sits in it when ffprobe hangs up was read from
// the source for nothing.
const relaySendBuffer = 64 << 10

// smallSendBuffers gives every accepted connection a relaySendBuffer send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetWriteBuffer(relaySendBuffer)
	}
	return conn, err
}

type relayServer struct {
	base   string
	client *http.Client
	// idle bounds how long a source may stay silent while sending a body.
	idle time.Duration
	srv  *http.Server

	mu      sync.Mutex
	targets map[string]*relayTarget
}

type relayTarget struct {
	ctx   context.Context
	url   string
	host  string
	limit int64
	stats *RelayStats
	// answerWithin bounds the wait for each answer's headers; 0: the transport's own bound.
	answerWithin time.Duration
}

func (s *relayServer) add(token string, t *relayTarget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.targets[token] = t
}

func (s *relayServer) remove(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.targets, token)
}

func (s *relayServer) lookup(urlPath string) *relayTarget {
	rest, ok := strings.CutPrefix(urlPath, "/t/")
	if !ok {
		return nil
	}
	token, _, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.targets[token]
}

func (s *relayServer) close() error {
	return s.srv.Close()
}

// ServeHTTP forwards one request of ffmpeg's to the source.
func (s *relayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	t := s.lookup(r.URL.Path)
	if t == nil {
		http.NotFound(w, r)
		return
	}
	if t.stats.BytesRead() >= t.limit {
		http.Error(w, "size limit reached", http.StatusBadGateway)
		return
	}
	// The upstream requests end when ffmpeg hangs up, the target is closed, or the
	// source stays silent for too long.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel)
	defer stop()
	x := &exchange{s: s, ctx: ctx, cancel: cancel, w: w, method: r.Method, t: t}

	first, last, ranged := parseRange(r.Header.Get("Range"))
	if !ranged || r.Method == http.MethodHead {
		x.passThrough(r.Header.Get("Range"))
		return
	}
	x.windows(first, last)
}

// forward sends one request to the source with only the headers that matter.
func (s *relayServer) forward(ctx context.Context, method, rangeHeader string, t *relayTarget) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, t.url, nil)
	if err != nil {
		return nil, err
	}
	if rangeHeader != "" {
		req.Header.Set("Range", rangeHeader)
	}
	// Ask for the bytes as stored: a compressed body would not match Content-Length or Range.
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; parla)")
	t.stats.requests.Add(1)
	if t.answerWithin <= 0 {
		return s.client.Do(req)
	}
	ctx, cancel := context.WithCancel(ctx)
	silent := time.AfterFunc(t.answerWithin, cancel)
	resp, err := s.client.Do(req.WithContext(ctx))
	if !silent.Stop() {
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		return nil, fmt.Errorf("%w: %s did not answer within %s", ErrSourceUnreachable, t.host, t.answerWithin)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

// cancelOnClose ends a response's own context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// sourceError names the host, drops the URL (its query may carry a signature) and makes
// sure the error wraps one of the link errors.
func sourceError(host string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, ErrForbiddenAddress) || errors.Is(err, ErrUnsupportedLink) || errors.Is(err, ErrSourceUnreachable) {
		return fmt.Errorf("fetching from %s: %w", host, err)
	}
	return fmt.Errorf("%w: fetching from %s: %v", ErrSourceUnreachable, host, err)
}
