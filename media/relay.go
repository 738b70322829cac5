package media

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
	"sync/atomic"
	"time"
)

// The relay is how ffmpeg and ffprobe read a visitor's link without ever being given it.
// They only get http://127.0.0.1:<port>/t/<token>/media.<ext>; the relay forwards each of
// their GET/HEAD requests (with its Range header, so analysis reads kilobytes) through the
// guarded client and streams the answer back. The token is 256 random bits, so no other
// local process can use the relay, and it stops working when its Relayed is closed.

// remoteFormats are the demuxers ffmpeg may use on a relayed link. Playlist and reference
// formats (hls, dash, concat, image2, …) are left out on purpose: they make ffmpeg open the
// URLs written inside the file itself — past the relay, straight to any host — and with
// "file" allowed they read local files.
const remoteFormats = "mov,matroska,webm,mp3,aac,ogg,flac,wav,avi,flv,mpegts,mpeg,asf,aiff,caf,ac3,eac3,amr,w64"

// relayWhitelist is the only protocol set a relayed link is opened with: HTTP over TCP to
// the relay. No file, pipe, crypto, data, subfile, hls, concat, etc.
const relayWhitelist = "http,tcp"

// RemoteProbeArgs builds the ffprobe arguments that describe a relayed link as JSON. url
// must be a relay URL, never a visitor's link.
func RemoteProbeArgs(url string) []string {
	return []string{
		"-hide_banner",
		"-loglevel", "error",
		"-protocol_whitelist", relayWhitelist,
		"-format_whitelist", remoteFormats,
		"-show_entries", "format=format_name,duration,bit_rate:stream=codec_type,codec_name,sample_rate,channels,duration",
		"-of", "json",
		url,
	}
}

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
	go s.srv.Serve(ln)
	g.relay = s
	return s, nil
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
	// The upstream request ends when ffmpeg hangs up, the target is closed, or the
	// source stays silent for too long.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel)
	defer stop()

	resp, err := s.forward(ctx, r, t)
	if err != nil {
		if ctx.Err() == nil {
			t.stats.fail(sourceError(t.host, err))
		}
		http.Error(w, "source failed", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.stats.fail(fmt.Errorf("%w: %s answered %s", ErrSourceUnreachable, t.host, resp.Status))
		http.Error(w, "source failed", http.StatusBadGateway)
		return
	}
	if resp.StatusCode == http.StatusOK && resp.ContentLength >= 0 {
		t.stats.length.Store(resp.ContentLength)
	}
	copyHeaders(w.Header(), resp)
	w.WriteHeader(resp.StatusCode)
	if r.Method == http.MethodHead {
		return
	}
	if err := s.copyBody(ctx, cancel, w, resp.Body, t); err != nil {
		// Cut the connection so ffmpeg sees a truncated body rather than a short file.
		panic(http.ErrAbortHandler)
	}
}

// forward sends ffmpeg's request to the source with only the headers that matter.
func (s *relayServer) forward(ctx context.Context, r *http.Request, t *relayTarget) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, t.url, nil)
	if err != nil {
		return nil, err
	}
	if rg := r.Header.Get("Range"); rg != "" {
		req.Header.Set("Range", rg)
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
	if resp.ContentLength >= 0 {
		dst.Set("Content-Length", fmt.Sprint(resp.ContentLength))
	}
}

// copyBody streams the source's body to ffmpeg, counting every byte against the target's
// limit. It returns an error when the copy stopped early.
func (s *relayServer) copyBody(ctx context.Context, cancel func(), w http.ResponseWriter, body io.Reader, t *relayTarget) error {
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
				return errors.New("size limit reached")
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			// Pass on what a slow source sent at once; ffmpeg may be waiting for it.
			if werr := flush(); werr != nil {
				return werr
			}
		}
		switch {
		case err == io.EOF:
			return nil
		case err == nil:
		case stalled.Load():
			t.stats.fail(fmt.Errorf("%w: %s sent nothing for %s", ErrSourceUnreachable, t.host, s.idle))
			return err
		case ctx.Err() != nil:
			// ffmpeg hung up or the target was closed: not the source's fault.
			return err
		default:
			t.stats.fail(sourceError(t.host, err))
			return err
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
