package openai

// Whether the server an engine calls is up: asked at boot and by /readyz, noted when a call
// cannot reach it, and asked again in the background once the last answer is old.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"parla/media"
)

// DefaultBaseURL is where the engines go when no base URL is set: OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1"

// recheckAfter is how old the last answer may be before Available has the server asked
// again (in the background: Available never waits on the network).
const recheckAfter = 30 * time.Second

// probeTimeout bounds a background check of the server.
const probeTimeout = 5 * time.Second

// server is the OpenAI-compatible server one engine calls, and what is known of it: the
// last time it was asked and what came of it.
type server struct {
	base string // base URL including the version, without a trailing slash or user info
	// user is the base URL's user name and password (http://user:pass@host/v1), sent as
	// basic auth by RoundTrip when a call has no Authorization header of its own, as Go's
	// client would; kept out of base, so that no error, log line or page shows them.
	user *url.Userinfo
	key  string
	hc   *http.Client
	now  func() time.Time

	mu       sync.Mutex
	down     error     // nil: up, or not asked yet
	at       time.Time // when down was last set
	checking bool      // a background check is running
}

func newServer(base, key string, hc *http.Client) *server {
	if hc == nil {
		hc = http.DefaultClient
	}
	base, user := splitUserinfo(strings.TrimRight(base, "/"))
	return &server{base: base, user: user, key: key, hc: hc, now: time.Now}
}

// splitUserinfo takes a base URL's user name and password out of it.
func splitUserinfo(base string) (string, *url.Userinfo) {
	u, err := url.Parse(base)
	if err != nil || u.User == nil {
		return base, nil
	}
	user := u.User
	u.User = nil
	return u.String(), user
}

// authorize gives req the base URL's user info as basic auth when it has no Authorization
// header (a key's Bearer wins, as it does in Go's client); req is cloned, never changed.
func (s *server) authorize(req *http.Request) *http.Request {
	if s.user == nil || req.Header.Get("Authorization") != "" || !s.sameHost(req.URL) {
		return req
	}
	req = req.Clone(req.Context())
	pass, _ := s.user.Password()
	req.SetBasicAuth(s.user.Username(), pass)
	return req
}

// sameHost reports a request to the base URL's own host: a redirect elsewhere is sent
// without the base URL's user info, as Go's client does with user info of its own.
func (s *server) sameHost(u *url.URL) bool {
	b, err := url.Parse(s.base)
	return err == nil && u != nil && strings.EqualFold(u.Host, b.Host)
}

// Check asks the server for GET {base}/models, which OpenAI, Kokoro-FastAPI, speaches and
// LocalAI all serve: any answer below 500 means the server is up (a 401 or 404 comes
// from a running server; the calls themselves say what is wrong). The answer is kept for
// Available.
func (s *server) Check(ctx context.Context) error {
	err := s.ask(ctx)
	s.note(err)
	return err
}

// ask makes the request of Check.
func (s *server) ask(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/models", nil)
	if err != nil {
		return fmt.Errorf("server %s: %w", s.base, err)
	}
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	resp, err := s.hc.Do(s.authorize(req))
	if err != nil {
		return fmt.Errorf("server %s does not answer: %w", s.base, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 500 {
		return fmt.Errorf("server %s: GET /models answered %s", s.base, resp.Status)
	}
	return nil
}

// note keeps the result of a check or of a call.
func (s *server) note(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down, s.at = err, s.now()
}

// RoundTrip makes one API call through the engine's HTTP client and keeps what it says
// of the server: a call that got no answer (refused, reset, timed out) while its context
// was live means the server is down until a check finds it up; an answer below 500 means
// it is up. The engines' clients go through it (newClient). A call whose context carries a
// process gate that refuses (media.ProcessGate: a runner that may have lost its order) is
// not made: each request is the engine's work, as each ffmpeg run is elsewhere.
func (s *server) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := media.ProcessGate(req.Context()); err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, on errors too
		}
		return nil, err
	}
	transport := s.hc.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	resp, err := transport.RoundTrip(s.authorize(req))
	switch {
	case err == nil && resp.StatusCode < 500:
		s.note(nil)
	case err != nil && req.Context().Err() == nil:
		s.note(fmt.Errorf("server %s does not answer: %w", s.base, err))
	}
	return resp, err
}

// client is the HTTP client of the engine's API calls: hc's settings, calls through
// RoundTrip.
func (s *server) client() *http.Client {
	c := *s.hc
	c.Transport = s
	return &c
}

// Down returns why the server was last found down, or nil when it was up (or never asked).
// When the last answer is older than recheckAfter, it has the server asked again in the
// background, so that a server that goes down or comes back is noticed without waiting.
func (s *server) Down() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.at.IsZero() && s.now().Sub(s.at) > recheckAfter && !s.checking {
		s.checking = true
		go s.recheck()
	}
	return s.down
}

// recheck is Down's background check.
func (s *server) recheck() {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	s.Check(ctx)
	s.mu.Lock()
	s.checking = false
	s.mu.Unlock()
}
