package links

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parla/media"
	"parla/providers/testkit"
)

// lyingFLACServer serves a FLAC whose header lies (its analysis is refused) at /lying.flac,
// and counts the requests it gets.
func lyingFLACServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	dir := t.TempDir()
	testkit.LyingFLAC(t, filepath.Join(dir, "lying.flac"), 8000, time.Hour, time.Minute)
	var requests atomic.Int64
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

// TestCachedAnalyses: the same link analysed again by the same client within the cache's
// time is not read again, refusals included; after it, it is; another client's same link
// is read anew; the cache holds at most MaxBytes.
func TestCachedAnalyses(t *testing.T) {
	srv, requests := lyingFLACServer(t)
	now := time.Unix(1_000_000, 0)
	c := NewCached(newLinkResolver(t, ResolverConfig{AnalyzeTimeout: 2 * time.Minute}))
	c.MaxBytes = 3 * 1024
	c.Now = func() time.Time { return now }
	ctx := context.Background()
	link := srv.URL + "/lying.flac"
	if _, err := c.Analyze(ctx, "192.0.2.1", link); err == nil {
		t.Fatal("the lying FLAC was accepted")
	}
	sent := requests.Load()
	for _, same := range []string{" " + link, link + "#t=1", strings.Replace(link, "http://", "HTTP://", 1)} {
		if _, err := c.Analyze(ctx, "192.0.2.1", same); err == nil {
			t.Fatal("the lying FLAC was accepted from the cache")
		}
	}
	if got := requests.Load(); got != sent {
		t.Errorf("three analyses more of the link within the minute read it %d more times; want 0", got-sent)
	}
	// Another visitor's analysis of the same link is made anew: neither its answer nor its
	// time tells them what the first visitor analysed.
	if _, err := c.Analyze(ctx, "2001:db8:1::/64", link); err == nil {
		t.Fatal("the lying FLAC was accepted")
	}
	if requests.Load() == sent {
		t.Error("another client's analysis of the same link was answered from the first one's")
	}
	sent = requests.Load()
	now = now.Add(61 * time.Second)
	c.Analyze(ctx, "192.0.2.1", link)
	if requests.Load() == sent {
		t.Error("a minute later, the link was not read again")
	}
	for i := range 40 {
		c.Analyze(ctx, "192.0.2.1", fmt.Sprintf("%s/missing-%d.flac", srv.URL, i))
	}
	if c.bytes > c.MaxBytes || len(c.entries) > int(c.MaxBytes/entryOverhead) {
		t.Errorf("%d analyses kept in %d bytes; want at most %d bytes", len(c.entries), c.bytes, c.MaxBytes)
	}
	// A visitor who leaves does not leave their cancelled analysis behind.
	before := len(c.entries)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Analyze(gone, "192.0.2.1", srv.URL+"/other.flac"); !errors.Is(err, context.Canceled) {
		t.Logf("cancelled analysis: %v", err)
	}
	if len(c.entries) > before {
		t.Error("a cancelled analysis is kept")
	}
}

// TestCachedAnalysesCheckLinksFirst: a link over the length limit, or one we never read,
// is refused before the cache: nothing is kept for it, whatever its size.
func TestCachedAnalysesCheckLinksFirst(t *testing.T) {
	c := NewCached(newLinkResolver(t, ResolverConfig{}))
	for _, link := range []string{
		"https://example.com/" + strings.Repeat("a", 1<<20),
		"ftp://example.com/a.mp4",
		"http://user:pass@example.com/a.mp4",
		"",
	} {
		if _, err := c.Analyze(context.Background(), "192.0.2.1", link); !errors.Is(err, ErrUnsupportedLink) {
			t.Errorf("%.40q: %v; want ErrUnsupportedLink", link, err)
		}
	}
	if len(c.entries) != 0 || c.bytes != 0 {
		t.Errorf("%d entries (%d bytes) kept for refused links; want none", len(c.entries), c.bytes)
	}
	// The key is a hash: a long link that passes costs what a short one does.
	if keyOf("192.0.2.1", strings.Repeat("a", 2048)) == keyOf("192.0.2.1", strings.Repeat("a", 2047)) {
		t.Error("two links share a key")
	}
}

// TestCachedAnalysesForgetABusyPool: an analysis refused because the visitors' pool stayed
// busy says nothing about the link: the next one is made, not answered from the cache.
func TestCachedAnalysesForgetABusyPool(t *testing.T) {
	srv, requests := lyingFLACServer(t)
	runner := media.New(media.Config{MaxVisitors: 1})
	c := NewCached(newLinkResolver(t, ResolverConfig{Runner: runner, AnalyzeTimeout: time.Second}))
	release, err := runner.VisitorSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	link := srv.URL + "/lying.flac"
	if _, err := c.Analyze(context.Background(), "192.0.2.1", link); !errors.Is(err, media.ErrVisitorsBusy) {
		t.Fatalf("analysis beside a full pool: %v; want ErrVisitorsBusy", err)
	}
	release()
	c.Resolver.cfg.AnalyzeTimeout = 2 * time.Minute
	sent := requests.Load()
	_, err = c.Analyze(context.Background(), "192.0.2.1", link)
	if errors.Is(err, media.ErrVisitorsBusy) || err == nil {
		t.Errorf("analysis once the pool is free: %v; want the lying FLAC refused", err)
	}
	if requests.Load() == sent {
		t.Error("the busy pool's refusal was answered from the cache")
	}
}
