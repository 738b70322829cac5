package links

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// relaySource serves a block of random bytes with Range support at /file, the same bytes
// without it at /plain, and a 404 at /gone.
func relaySource(t *testing.T, size int) (*httptest.Server, []byte) {
	t.Helper()
	data := make([]byte, size)
	rand.Read(data)
	mux := http.NewServeMux()
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		http.ServeContent(w, r, "file.mp4", time.Time{}, bytes.NewReader(data))
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Write(data)
	})
	mux.HandleFunc("/gone", http.NotFound)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, data
}

func relayFor(t *testing.T, g *Guard, raw string, limit int64) *Relayed {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := g.Relay(context.Background(), u, limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rl.Close)
	return rl
}

func relayGet(t *testing.T, method, raw string, header http.Header) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(method, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

func TestRelayForwardsRangesAndCounts(t *testing.T) {
	srv, data := relaySource(t, 256<<10)
	g := NewGuard(GuardConfig{AllowPrivate: true})
	t.Cleanup(func() { g.Close() })
	rl := relayFor(t, g, srv.URL+"/file", 0)

	if !strings.HasPrefix(rl.URL, "http://127.0.0.1:") || !strings.HasSuffix(rl.URL, "/media") {
		t.Errorf("relay URL %s is not a loopback URL", rl.URL)
	}
	if strings.Contains(rl.URL, strings.TrimPrefix(srv.URL, "http://")) {
		t.Errorf("relay URL %s names the source", rl.URL)
	}

	resp, body, err := relayGet(t, http.MethodGet, rl.URL, http.Header{"Range": {"bytes=1000-1999"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[1000:2000]) {
		t.Fatalf("range: %s, %d bytes", resp.Status, len(body))
	}
	if got, want := resp.Header.Get("Content-Range"), "bytes 1000-1999/262144"; got != want {
		t.Errorf("Content-Range %q, want %q", got, want)
	}
	if resp.Header.Get("Accept-Ranges") != "bytes" || resp.Header.Get("Content-Type") != "video/mp4" || resp.ContentLength != 1000 {
		t.Errorf("headers not relayed: %v, length %d", resp.Header, resp.ContentLength)
	}
	if got := rl.Stats.BytesRead(); got != 1000 {
		t.Errorf("BytesRead after a 1000-byte range = %d", got)
	}

	resp, body, err = relayGet(t, http.MethodHead, rl.URL, nil)
	if err != nil || resp.StatusCode != http.StatusOK || len(body) != 0 || resp.ContentLength != int64(len(data)) {
		t.Fatalf("HEAD: %v %v, %d bytes, length %d", err, resp, len(body), resp.ContentLength)
	}

	resp, body, err = relayGet(t, http.MethodGet, rl.URL, nil)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("full GET: %v, %d bytes", err, len(body))
	}
	if got, want := rl.Stats.BytesRead(), int64(1000+len(data)); got != want {
		t.Errorf("BytesRead = %d, want %d", got, want)
	}
	if got := rl.Stats.Length(); got != int64(len(data)) {
		t.Errorf("Length = %d, want %d", got, len(data))
	}
	if rl.Stats.Requests() != 3 || rl.Stats.Err() != nil {
		t.Errorf("requests %d, err %v", rl.Stats.Requests(), rl.Stats.Err())
	}
}

func TestRelayRefuses(t *testing.T) {
	srv, _ := relaySource(t, 64<<10)
	g := NewGuard(GuardConfig{AllowPrivate: true})
	t.Cleanup(func() { g.Close() })
	rl := relayFor(t, g, srv.URL+"/file", 0)
	base := rl.URL[:strings.Index(rl.URL, "/t/")]

	tests := []struct {
		name, method, url string
		want              int
	}{
		{"unknown token", http.MethodGet, base + "/t/" + strings.Repeat("0", 64) + "/media", http.StatusNotFound},
		{"no token", http.MethodGet, base + "/", http.StatusNotFound},
		{"token prefix", http.MethodGet, rl.URL[:len(rl.URL)-len("/media")-1], http.StatusNotFound},
		{"POST", http.MethodPost, rl.URL, http.StatusMethodNotAllowed},
		{"PUT", http.MethodPut, rl.URL, http.StatusMethodNotAllowed},
		{"DELETE", http.MethodDelete, rl.URL, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _, err := relayGet(t, tt.method, tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s: %s, want %d", tt.method, tt.url, resp.Status, tt.want)
			}
		})
	}
	if rl.Stats.Requests() != 0 {
		t.Errorf("refused requests reached the source %d times", rl.Stats.Requests())
	}
	rl.Close()
	resp, _, err := relayGet(t, http.MethodGet, rl.URL, nil)
	if err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET after Close: %v %v, want 404", err, resp)
	}
}

func TestRelayReportsSourceFailures(t *testing.T) {
	srv, _ := relaySource(t, 64<<10)
	open := NewGuard(GuardConfig{AllowPrivate: true})
	strict := NewGuard(GuardConfig{})
	t.Cleanup(func() { open.Close(); strict.Close() })

	tests := []struct {
		name  string
		g     *Guard
		url   string
		limit int64
		want  error
	}{
		{"404", open, srv.URL + "/gone", 0, ErrSourceUnreachable},
		{"over the byte limit", open, srv.URL + "/file", 10 << 10, ErrSourceUnreachable},
		{"private address", strict, srv.URL + "/file", 0, ErrForbiddenAddress},
		{"not http", open, "file:///etc/passwd", 0, ErrUnsupportedLink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rl := relayFor(t, tt.g, tt.url, tt.limit)
			resp, body, err := relayGet(t, http.MethodGet, rl.URL, nil)
			if err == nil && resp.StatusCode == http.StatusOK && len(body) == 64<<10 {
				t.Fatalf("the whole file came through")
			}
			if !errors.Is(rl.Stats.Err(), tt.want) {
				t.Fatalf("Stats.Err() = %v, want %v", rl.Stats.Err(), tt.want)
			}
			if tt.limit > 0 && rl.Stats.BytesRead() > tt.limit+relayBufferSize {
				t.Errorf("read %d bytes with a limit of %d", rl.Stats.BytesRead(), tt.limit)
			}
			if strings.Contains(rl.Stats.Err().Error(), "/gone") {
				t.Errorf("error carries the source's path: %v", rl.Stats.Err())
			}
		})
	}
}

// stallingSource sends "head" and then nothing, until the client goes away.
func stallingSource(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("head"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRelayStopsWithContext(t *testing.T) {
	srv := stallingSource(t)
	g := NewGuard(GuardConfig{AllowPrivate: true})
	t.Cleanup(func() { g.Close() })
	u, _ := url.Parse(srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	rl, err := g.Relay(ctx, u, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	resp, err := http.Get(rl.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, 4)
	if _, err := io.ReadFull(resp.Body, head); err != nil || string(head) != "head" {
		t.Fatalf("first bytes %q: %v", head, err)
	}
	cancel()
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(resp.Body)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("a cancelled relay ended the body cleanly")
		}
	case <-time.After(20 * time.Second): // the source stalls for ever: any bound proves the stop
		t.Fatal("cancelling the relay's context did not end the transfer")
	}
	if err := rl.Stats.Err(); err != nil {
		t.Errorf("a cancellation is not the source's fault: %v", err)
	}
}

func TestRelayGivesUpOnASilentSource(t *testing.T) {
	srv := stallingSource(t)
	g := NewGuard(GuardConfig{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	t.Cleanup(func() { g.Close() })
	rl := relayFor(t, g, srv.URL, 0)
	start := time.Now()
	_, body, err := relayGet(t, http.MethodGet, rl.URL, nil)
	if err == nil {
		t.Errorf("a stalled source ended cleanly with %q", body)
	}
	// The source stalls for ever; without the configured 200 ms the guard's default (30 s,
	// defaultFetchTimeout) would end it: 20 s tells them apart on a loaded runner too.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("gave up after %s, want about 200ms", d)
	}
	if !errors.Is(rl.Stats.Err(), ErrSourceUnreachable) {
		t.Errorf("Stats.Err() = %v, want %v", rl.Stats.Err(), ErrSourceUnreachable)
	}
}

func TestRelayName(t *testing.T) {
	tests := map[string]string{
		"/v/clip.MP4": "media.mp4", "/a.webm": "media.webm", "/": "media", "/x.tar.gz": "media.gz",
		"/evil.m3u8?x": "media", "/x.a/b": "media", "/x.%2e%2e": "media", "/x.toolongext": "media",
	}
	for in, want := range tests {
		if got := relayName(in); got != want {
			t.Errorf("relayName(%q) = %q, want %q", in, got, want)
		}
	}
}
