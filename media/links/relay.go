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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The relay is how ffmpeg and ffprobe read a visitor's link without ever being given it.
// They only get http://127.0.0.1:<port>/t/<token>/media.<ext>; the relay forwards each of
// their GET/HEAD requests (with its Range header, so analysis reads kilobytes) through the
// guarded client and streams the answer back. The token is 256 random bits, so no other
// local process can use the relay, and it stops working when its Relayed is closed.

// relayBufferSize is the copy buffer per relayed response; memory does not grow with the file.
const relayBufferSize = 32 << 10

var relayBuffers = sync.Pool{New: func() any { b := make([]byte, relayBufferSize); return &b }}

// RelayStats counts what one relayed target cost and records the first thing that went
// wrong at the source, which explains a failing ffmpeg run better than its own message.
type RelayStats struct {
	bytesRead atomic.Int64
	requests  atomic.Int64
	// length is the size the source announced for the whole file, -1 when it did not.
	length atomic.Int64

	mu  sync.Mutex
	err error
}

// BytesRead is how many body bytes the relay read from the source.
func (s *RelayStats) BytesRead() int64 { return s.bytesRead.Load() }

// Requests is how many requests were sent to the source.
func (s *RelayStats) Requests() int64 { return s.requests.Load() }

// Length is the size of the whole file as the source announced it, -1 when unknown (a
// stream sent without length).
func (s *RelayStats) Length() int64 { return s.length.Load() }

// Err is the first source failure: wraps ErrSourceUnreachable (HTTP error, too big,
// unreachable), ErrForbiddenAddress or ErrUnsupportedLink (a refused redirect). Nil if none.
func (s *RelayStats) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *RelayStats) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

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
	t := &relayTarget{ctx: ctx, url: target.String(), host: target.Hostname(), limit: limit, stats: &RelayStats{}}
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

// Window sizes for ranged reads. A read of ffmpeg's "bytes=N-" is fetched from the source
// as a series of closed ranges that start small and double: ffprobe, which reads an index
// and hangs up, costs the source a few hundred kilobytes instead of whatever the network
// buffers held when it hung up, and a whole-file read soon runs in large windows.
const (
	firstWindow int64 = 64 << 10
	maxWindow   int64 = 8 << 20
)

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

// exchange is one request of ffmpeg's and the source requests that answer it.
type exchange struct {
	s      *relayServer
	ctx    context.Context
	cancel func()
	w      http.ResponseWriter
	method string
	t      *relayTarget
}

// passThrough forwards the request once and relays the answer as it is.
func (x *exchange) passThrough(rangeHeader string) {
	resp, ok := x.open(rangeHeader)
	if !ok {
		return
	}
	defer resp.Body.Close()
	x.relay(resp)
}

// relay sends a source's answer on unchanged.
func (x *exchange) relay(resp *http.Response) {
	if resp.StatusCode == http.StatusOK && resp.ContentLength >= 0 {
		x.t.stats.length.Store(resp.ContentLength)
	}
	copyHeaders(x.w.Header(), resp)
	if resp.ContentLength >= 0 {
		x.w.Header().Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	x.w.WriteHeader(resp.StatusCode)
	if x.method == http.MethodHead {
		return
	}
	if _, err := x.s.copyBody(x.ctx, x.cancel, x.w, resp.Body, x.t); err != nil {
		// Cut the connection so ffmpeg sees a truncated body rather than a short file.
		panic(http.ErrAbortHandler)
	}
}

// windows answers "bytes=first-last" (last < 0: to the end) with one 206 response whose
// body is fetched from the source in growing closed ranges. A source that ignores ranges,
// or does not say how big the file is, gets its answer relayed as it is.
func (x *exchange) windows(first, last int64) {
	win := firstWindow
	resp, ok := x.open(byteRange(first, first+win-1, last))
	if !ok {
		return
	}
	defer func() {
		if resp != nil {
			resp.Body.Close()
		}
	}()
	if resp.StatusCode != http.StatusPartialContent {
		x.relay(resp) // 200: the source ignores ranges; 416: nothing there
		return
	}
	from, _, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
	if !ok || from != first || total < 0 {
		// Without the file's size the answer cannot be promised up front: ask again as
		// ffmpeg asked.
		resp.Body.Close()
		resp = nil
		x.passThrough(byteRange(first, last, -1))
		return
	}
	x.t.stats.length.Store(total)
	end := total - 1
	if last >= 0 && last < end {
		end = last
	}
	copyHeaders(x.w.Header(), resp)
	x.w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, end, total))
	x.w.Header().Set("Content-Length", strconv.FormatInt(end-first+1, 10))
	x.w.WriteHeader(http.StatusPartialContent)
	for pos := first; ; {
		n, err := x.s.copyBody(x.ctx, x.cancel, x.w, resp.Body, x.t)
		pos += n
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		resp.Body.Close()
		if pos > end {
			return
		}
		if n == 0 {
			x.t.stats.fail(fmt.Errorf("%w: %s sent an empty range", ErrSourceUnreachable, x.t.host))
			panic(http.ErrAbortHandler)
		}
		win = min(2*win, maxWindow)
		if resp, ok = x.next(byteRange(pos, pos+win-1, end), pos); !ok {
			panic(http.ErrAbortHandler)
		}
	}
}

// next fetches a later window; the source must answer with exactly that range.
func (x *exchange) next(rangeHeader string, pos int64) (*http.Response, bool) {
	resp, err := x.s.forward(x.ctx, x.method, rangeHeader, x.t)
	if err != nil {
		if x.ctx.Err() == nil {
			x.t.stats.fail(sourceError(x.t.host, err))
		}
		return nil, false
	}
	if from, _, _, ok := parseContentRange(resp.Header.Get("Content-Range")); resp.StatusCode != http.StatusPartialContent || !ok || from != pos {
		resp.Body.Close()
		x.t.stats.fail(fmt.Errorf("%w: %s answered a range request with %s", ErrSourceUnreachable, x.t.host, resp.Status))
		return nil, false
	}
	return resp, true
}

// open sends the first source request; on failure it answers ffmpeg with 502 itself.
func (x *exchange) open(rangeHeader string) (*http.Response, bool) {
	resp, err := x.s.forward(x.ctx, x.method, rangeHeader, x.t)
	if err != nil {
		if x.ctx.Err() == nil {
			x.t.stats.fail(sourceError(x.t.host, err))
		}
		http.Error(x.w, "source failed", http.StatusBadGateway)
		return nil, false
	}
	if resp.StatusCode >= 400 && resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		resp.Body.Close()
		x.t.stats.fail(fmt.Errorf("%w: %s answered %s", ErrSourceUnreachable, x.t.host, resp.Status))
		http.Error(x.w, "source failed", http.StatusBadGateway)
		return nil, false
	}
	return resp, true
}

// byteRange is the Range header for first..last, with last capped at limit (limit < 0:
// no cap); last < 0 means to the end.
func byteRange(first, last, limit int64) string {
	if limit >= 0 && (last < 0 || last > limit) {
		last = limit
	}
	if last < 0 {
		return fmt.Sprintf("bytes=%d-", first)
	}
	return fmt.Sprintf("bytes=%d-%d", first, last)
}

// parseRange reads a single-range header "bytes=first-" or "bytes=first-last" (last -1 for
// the former). Suffix ranges and lists are not windowed.
func parseRange(h string) (first, last int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	a, b, dash := strings.Cut(spec, "-")
	if !found || !dash || strings.Contains(b, ",") {
		return 0, 0, false
	}
	first, err := strconv.ParseInt(a, 10, 64)
	if err != nil || first < 0 {
		return 0, 0, false
	}
	if b == "" {
		return first, -1, true
	}
	last, err = strconv.ParseInt(b, 10, 64)
	if err != nil || last < first {
		return 0, 0, false
	}
	return first, last, true
}

// parseContentRange reads "bytes first-last/total"; total is -1 for "*".
func parseContentRange(h string) (first, last, total int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes ")
	rng, size, slash := strings.Cut(spec, "/")
	first, last, ranged := parseRange("bytes=" + rng)
	if !found || !slash || !ranged || last < 0 {
		return 0, 0, 0, false
	}
	if size == "*" {
		return first, last, -1, true
	}
	total, err := strconv.ParseInt(size, 10, 64)
	if err != nil || total <= last {
		return 0, 0, 0, false
	}
	return first, last, total, true
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
	return s.client.Do(req)
}

// relayedHeaders are the response headers ffmpeg needs to seek and size the file.
var relayedHeaders = []string{"Content-Type", "Content-Range", "Accept-Ranges", "Last-Modified", "ETag"}

func copyHeaders(dst http.Header, resp *http.Response) {
	for _, k := range relayedHeaders {
		if v := resp.Header.Get(k); v != "" {
			dst.Set(k, v)
		}
	}
}

// copyBody streams the source's body to ffmpeg, counting every byte against the target's
// limit. It returns the bytes copied and an error when the copy stopped early.
func (s *relayServer) copyBody(ctx context.Context, cancel func(), w http.ResponseWriter, body io.Reader, t *relayTarget) (int64, error) {
	var copied int64
	flush := http.NewResponseController(w).Flush
	bufp := relayBuffers.Get().(*[]byte)
	defer relayBuffers.Put(bufp)
	buf := *bufp
	var stalled atomic.Bool
	idle := time.AfterFunc(s.idle, func() { stalled.Store(true); cancel() })
	defer idle.Stop()
	for {
		n, err := body.Read(buf)
		idle.Reset(s.idle)
		if n > 0 {
			if total := t.stats.bytesRead.Add(int64(n)); total > t.limit {
				t.stats.fail(fmt.Errorf("%w: %s sent more than %d bytes", ErrSourceUnreachable, t.host, t.limit))
				return copied, errors.New("size limit reached")
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return copied, werr
			}
			copied += int64(n)
			// Pass on what a slow source sent at once; ffmpeg may be waiting for it.
			if werr := flush(); werr != nil {
				return copied, werr
			}
		}
		switch {
		case err == io.EOF:
			return copied, nil
		case err == nil:
		case stalled.Load():
			t.stats.fail(fmt.Errorf("%w: %s sent nothing for %s", ErrSourceUnreachable, t.host, s.idle))
			return copied, err
		case ctx.Err() != nil:
			// ffmpeg hung up or the target was closed: not the source's fault.
			return copied, err
		default:
			t.stats.fail(sourceError(t.host, err))
			return copied, err
		}
	}
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
