package links

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/media"
	"parla/providers/testkit"
)

// silentHost accepts connections and never answers; it counts them.
func silentHost(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			accepted.Add(1)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String(), &accepted
}

// TestSilentLinksLeaveThePoolToUploads: issue 40's finding — while 12 analyses of a link
// whose host accepts and never answers were in flight, another visitor's 20 s upload took
// 13.3 s to measure: each analysis held the visitors' one place for its whole 15 s. A link
// analysis now waits for the source's first byte (FirstByteTimeout) before it takes a
// place: the upload is measured within 10 s (alone it takes a second or two; the bound is
// the issue's), and each silent link is refused as unreachable.
func TestSilentLinksLeaveThePoolToUploads(t *testing.T) {
	ffmpeg := testkit.Binary(t, "ffmpeg")
	testkit.Binary(t, "ffprobe")
	upload := filepath.Join(t.TempDir(), "talk.flac")
	if out, err := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-f", "lavfi", "-i",
		"sine=frequency=300:duration=20", "-ac", "1", "-ar", "16000", upload).CombinedOutput(); err != nil {
		t.Fatalf("making the upload: %v: %s", err, out)
	}
	host, accepted := silentHost(t)
	runner := media.New(media.Config{MaxVisitors: 1}) // the pool of a 2-core machine
	r := newLinkResolver(t, ResolverConfig{Runner: runner})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 12)
	for range 12 {
		go func() {
			_, err := r.Analyze(ctx, host+"/talk.mp4")
			errs <- err
		}()
	}
	testkit.Eventually(t, 10*time.Second, func() bool { return accepted.Load() > 0 }, "an analysis reaching the host")
	time.Sleep(300 * time.Millisecond) // the others reach it, or queue for the pool
	start := time.Now()
	m, err := runner.CheckUpload(context.Background(), upload, time.Hour)
	took := time.Since(start)
	t.Logf("the upload was measured in %s beside 12 silent links (%v, %s)", took.Round(time.Millisecond), err, m.Length)
	if err != nil {
		t.Fatalf("measuring the upload: %v", err)
	}
	if took > 10*time.Second {
		t.Errorf("the upload took %s to measure beside 12 analyses of a silent link; want at most 10 s", took.Round(time.Millisecond))
	}
	// Each silent link is refused as unreachable, soon after its first-byte wait.
	for range 12 {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrSourceUnreachable) {
				t.Errorf("analysis of a silent link: %v; want ErrSourceUnreachable", err)
			}
		case <-time.After(30 * time.Second):
			cancel() // the old way: each held the pool for its 15 s
			t.Fatal("the analyses of a silent link were still running 30 s on")
		}
	}
}

// TestRelayGivesUpOnASourceThatNeverAnswers: an analysis' relay bounds the wait for each
// answer (FirstByteTimeout), so a source that answered the first-byte check and then goes
// silent holds the visitors' place for that long, not for the whole analysis; a relay
// without the bound waits as any request does (GuardConfig.Timeout).
func TestRelayGivesUpOnASourceThatNeverAnswers(t *testing.T) {
	host, _ := silentHost(t)
	g := NewGuard(GuardConfig{AllowPrivate: true})
	t.Cleanup(func() { g.Close() })
	u, err := g.CheckURL(host + "/a.mp4")
	if err != nil {
		t.Fatal(err)
	}
	rl, err := g.relayAnswering(context.Background(), u, 0, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	start := time.Now()
	resp, _, err := relayGet(t, "GET", rl.URL, http.Header{"Range": {"bytes=0-"}})
	if err == nil && resp.StatusCode != http.StatusBadGateway {
		t.Errorf("relay answered %s for a silent source; want 502", resp.Status)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the relay waited %s for a silent source bounded at 300 ms", took)
	}
	if !errors.Is(rl.Stats.Err(), ErrSourceUnreachable) {
		t.Errorf("source error %v; want ErrSourceUnreachable", rl.Stats.Err())
	}
}
