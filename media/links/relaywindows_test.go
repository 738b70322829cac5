package links

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestRelayReadsOpenRangesInWindows checks that "bytes=N-" reaches the source as closed,
// growing ranges, so a reader that hangs up early costs the source little.
func TestRelayReadsOpenRangesInWindows(t *testing.T) {
	data := make([]byte, 4<<20)
	rand.Read(data)
	var ranges []string
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ranges = append(ranges, r.Header.Get("Range"))
		http.ServeContent(countingWriter{w, &served}, r, "v.mp4", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	g := NewGuard(GuardConfig{AllowPrivate: true})
	t.Cleanup(func() { g.Close() })
	rl := relayFor(t, g, srv.URL+"/v.mp4", 0)

	resp, body, err := relayGet(t, http.MethodGet, rl.URL, http.Header{"Range": {"bytes=1000-"}})
	if err != nil || resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[1000:]) {
		t.Fatalf("open range: %v %v, %d bytes", err, resp, len(body))
	}
	if got, want := resp.Header.Get("Content-Range"), fmt.Sprintf("bytes 1000-%d/%d", len(data)-1, len(data)); got != want {
		t.Errorf("Content-Range %q, want %q", got, want)
	}
	want := []string{"bytes=1000-66535", "bytes=66536-197607", "bytes=197608-459751", "bytes=459752-984039",
		"bytes=984040-2032615", "bytes=2032616-4129767", "bytes=4129768-4194303"}
	if !slices.Equal(ranges, want) {
		t.Errorf("source saw ranges %q, want %q", ranges, want)
	}

	// A reader that takes 10 KB and hangs up costs the source the first two windows at
	// most: the second is requested once the first fit into the socket buffers. The
	// reader's receive buffer is kept small, as ffmpeg's is while it parses.
	before := served.Load()
	conn := dialSmallBuffer(t, strings.TrimPrefix(rl.URL, "http://"))
	path := rl.URL[strings.Index(rl.URL, "/t/"):]
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: relay\r\nRange: bytes=0-\r\n\r\n", path)
	if _, err := io.ReadFull(conn, make([]byte, 10<<10)); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	time.Sleep(100 * time.Millisecond) // under test: windows fetched after the hang-up would be counted now
	if got := served.Load() - before; got > 3*firstWindow {
		t.Errorf("an early hang-up cost the source %d bytes", got)
	}
}

// dialSmallBuffer connects to the host:port at the start of addr with a 16 KB receive buffer.
func dialSmallBuffer(t *testing.T, addr string) net.Conn {
	t.Helper()
	addr, _, _ = strings.Cut(addr, "/")
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
		})
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestRelayUnknownTotal: a source whose ranges do not tell the file's size is asked again
// with ffmpeg's own open range, and its answer relayed as it is.
func TestRelayUnknownTotal(t *testing.T) {
	data := make([]byte, 200<<10)
	rand.Read(data)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first, last, ok := parseRange(r.Header.Get("Range"))
		if !ok {
			w.Write(data)
			return
		}
		if last < 0 || last >= int64(len(data)) {
			last = int64(len(data)) - 1
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/*", first, last))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[first : last+1])
	}))
	t.Cleanup(srv.Close)
	g := NewGuard(GuardConfig{AllowPrivate: true})
	t.Cleanup(func() { g.Close() })
	rl := relayFor(t, g, srv.URL, 0)
	resp, body, err := relayGet(t, http.MethodGet, rl.URL, http.Header{"Range": {"bytes=100-"}})
	if err != nil || resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[100:]) {
		t.Fatalf("GET: %v %v, %d bytes", err, resp, len(body))
	}
}

// TestRelaySourceStopsHonouringRanges: a source that answers a later window with the whole
// file is cut off, not spliced in.
func TestRelaySourceStopsHonouringRanges(t *testing.T) {
	data := make([]byte, 300<<10)
	rand.Read(data)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			r.Header.Del("Range")
		}
		http.ServeContent(w, r, "v.mp4", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	g := NewGuard(GuardConfig{AllowPrivate: true})
	t.Cleanup(func() { g.Close() })
	rl := relayFor(t, g, srv.URL, 0)
	_, body, err := relayGet(t, http.MethodGet, rl.URL, http.Header{"Range": {"bytes=0-"}})
	if err == nil {
		t.Fatalf("body ended cleanly after %d bytes", len(body))
	}
	if !errors.Is(rl.Stats.Err(), ErrSourceUnreachable) {
		t.Errorf("Stats.Err() = %v, want %v", rl.Stats.Err(), ErrSourceUnreachable)
	}
}

func TestParseRanges(t *testing.T) {
	ranges := []struct {
		h           string
		first, last int64
		ok          bool
	}{
		{"bytes=0-", 0, -1, true}, {"bytes=100-199", 100, 199, true}, {"bytes=5-5", 5, 5, true},
		{"bytes=-500", 0, 0, false}, {"bytes=0-1,5-6", 0, 0, false}, {"bytes=9-3", 0, 0, false},
		{"items=0-", 0, 0, false}, {"", 0, 0, false}, {"bytes=x-", 0, 0, false},
	}
	for _, tt := range ranges {
		first, last, ok := parseRange(tt.h)
		if first != tt.first || last != tt.last || ok != tt.ok {
			t.Errorf("parseRange(%q) = %d, %d, %v", tt.h, first, last, ok)
		}
	}
	contentRanges := []struct {
		h                  string
		first, last, total int64
		ok                 bool
	}{
		{"bytes 0-99/1000", 0, 99, 1000, true}, {"bytes 10-19/*", 10, 19, -1, true},
		{"bytes */1000", 0, 0, 0, false}, {"bytes 0-999/999", 0, 0, 0, false}, {"bytes 0-/10", 0, 0, 0, false},
		{"0-9/10", 0, 0, 0, false},
	}
	for _, tt := range contentRanges {
		first, last, total, ok := parseContentRange(tt.h)
		if first != tt.first || last != tt.last || total != tt.total || ok != tt.ok {
			t.Errorf("parseContentRange(%q) = %d, %d, %d, %v", tt.h, first, last, total, ok)
		}
	}
}

func TestRelayWithoutRangeSupport(t *testing.T) {
	srv, data := relaySource(t, 64<<10)
	g := NewGuard(GuardConfig{AllowPrivate: true})
	t.Cleanup(func() { g.Close() })
	rl := relayFor(t, g, srv.URL+"/plain", 0)
	resp, body, err := relayGet(t, http.MethodGet, rl.URL, http.Header{"Range": {"bytes=10-19"}})
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("GET: %v, %d bytes", err, len(body))
	}
	if resp.Header.Get("Accept-Ranges") != "" {
		t.Errorf("relay invented Accept-Ranges")
	}
}
