package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/testkit"
)

// TestServerUpDownAndBack: any answer below 500 to GET /models is up (404 too); a 5xx or no
// answer is down and closes the engine with the reason; a speech call that gets no answer
// closes it at once; an old answer is asked again in the background, so the engine opens
// again when the server is back, without a call of its own.
func TestServerUpDownAndBack(t *testing.T) {
	var status atomic.Int64
	status.Store(http.StatusNotFound)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	s := NewSpeaker(Config{BaseURL: srv.URL + "/v1"}) // a local server: no key needed
	now := time.Now()
	s.server.now = func() time.Time { return now }
	ctx := context.Background()
	if err := s.Check(ctx); err != nil || s.Available() != nil {
		t.Fatalf("404 from /models: %v, %v; want up", err, s.Available())
	}
	status.Store(http.StatusBadGateway)
	if err := s.Check(ctx); err == nil || !strings.Contains(err.Error(), "502") {
		t.Errorf("502: %v", err)
	}
	if err := s.Available(); !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), srv.URL+"/v1") {
		t.Errorf("Available with the server answering 502: %v", err)
	}
	status.Store(http.StatusOK)
	now = now.Add(recheckAfter + time.Second)
	s.Available() // starts the background check
	testkit.Eventually(t, 5*time.Second, func() bool { return s.Available() == nil }, "the engine to open again")

	// A call that gets no answer closes the engine without waiting for a check.
	srv.Close()
	err := s.Speak(ctx, providers.SpeechRequest{Voice: "alloy", Text: "Hi.", Format: "mp3", Speed: 1}, &strings.Builder{})
	if err == nil {
		t.Fatal("speech from a closed server")
	}
	if err := s.Available(); !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("Available after a call found no server: %v", err)
	}
}

// TestNoKey: OpenAI's own API takes no call without a key; a server at another base URL
// gets calls without an Authorization header.
func TestNoKey(t *testing.T) {
	if err := NewSpeaker(Config{}).Available(); !errors.Is(err, providers.ErrUnavailable) ||
		!strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("OpenAI's API without a key: %v", err)
	}
	api, srv := newFakeAPI(t)
	s := NewSpeaker(Config{BaseURL: srv.URL + "/v1"})
	if err := s.Available(); err != nil {
		t.Fatalf("a local server without a key: %v", err)
	}
	speak(t, s, providers.SpeechRequest{Voice: "alloy", Text: "No key here.", Format: "mp3", Speed: 1})
	if calls := api.received(); len(calls) != 1 || calls[0].Auth != "" {
		t.Errorf("calls %+v, want one without Authorization", calls)
	}
}

// A base URL's user name and password (http://user:pass@host/v1) reach the server as basic
// auth on every request (the check and the calls), and never the operator's eyes: not the
// base URL shown, not the check's error, not the closed engine's reason, not a failed call.
func TestBaseURLCredentialsAreSentNeverShown(t *testing.T) {
	var auths []string
	var status atomic.Int64
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://alice:s3cret-pw@", 1) + "/v1"
	s := NewSpeaker(Config{BaseURL: base})
	ctx := context.Background()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	status.Store(http.StatusBadGateway)
	checkErr := s.Check(ctx)
	srv.Close()
	callErr := s.Speak(ctx, providers.SpeechRequest{Voice: "alloy", Text: "Hi.", Format: "mp3", Speed: 1}, &strings.Builder{})
	downErr := s.Check(ctx)
	if want := "Basic YWxpY2U6czNjcmV0LXB3"; len(auths) < 2 || auths[0] != want || auths[1] != want {
		t.Errorf("Authorization headers %q, want basic auth alice:s3cret-pw", auths)
	}
	for name, shown := range map[string]string{"BaseURL": s.BaseURL(), "a 502 check": fmt.Sprint(checkErr),
		"a failed call": fmt.Sprint(callErr), "a check with no answer": fmt.Sprint(downErr), "Available": fmt.Sprint(s.Available())} {
		if strings.Contains(shown, "s3cret") || strings.Contains(shown, "alice") {
			t.Errorf("%s shows the base URL's credentials: %s", name, shown)
		}
	}
	if s.BaseURL() != srv.URL+"/v1" {
		t.Errorf("BaseURL() = %q, want %q", s.BaseURL(), srv.URL+"/v1")
	}
	// A key's Bearer wins over the user info, as in Go's client.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
	}))
	defer srv2.Close()
	auths = nil
	keyed := NewSpeaker(Config{APIKey: "sk-test", BaseURL: strings.Replace(srv2.URL, "http://", "http://alice:s3cret-pw@", 1) + "/v1"})
	if err := keyed.Check(ctx); err != nil || len(auths) != 1 || auths[0] != "Bearer sk-test" {
		t.Errorf("with a key: %v, Authorization %q", err, auths)
	}
}

// The base URL's user info goes to its own host only: an engine server that redirects a
// call to another host does not hand it the credentials (Go's client drops Authorization
// on a redirect to another host name; the engines' transport must not put it back).
func TestBaseURLCredentialsStayWithTheirHost(t *testing.T) {
	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere = append(elsewhere, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	base := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Another host name for the same machine: Go keeps Authorization across ports.
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer base.Close()
	s := NewSpeaker(Config{BaseURL: strings.Replace(base.URL, "http://", "http://alice:s3cret-pw@", 1) + "/v1"})
	_ = s.Speak(context.Background(), providers.SpeechRequest{Voice: "alloy", Text: "Hi.", Format: "mp3", Speed: 1}, &strings.Builder{})
	if len(elsewhere) == 0 || slices.ContainsFunc(elsewhere, func(a string) bool { return a != "" }) {
		t.Errorf("the host redirected to got Authorization %q, want none", elsewhere)
	}
}
