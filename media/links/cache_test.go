package links

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"parla/providers/testkit"
)

// TestCachedAnalyses: the same link analysed again within the cache's time is not read
// again, refusals included; after it, it is; the cache holds at most Entries analyses.
func TestCachedAnalyses(t *testing.T) {
	dir := t.TempDir()
	testkit.LyingFLAC(t, filepath.Join(dir, "lying.flac"), 8000, time.Hour, time.Minute)
	var requests atomic.Int64
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	now := time.Unix(1_000_000, 0)
	c := NewCached(newLinkResolver(t, ResolverConfig{AnalyzeTimeout: 2 * time.Minute}))
	c.Entries = 3
	c.Now = func() time.Time { return now }
	ctx := context.Background()
	link := srv.URL + "/lying.flac"
	if _, err := c.Analyze(ctx, link); err == nil {
		t.Fatal("the lying FLAC was accepted")
	}
	sent := requests.Load()
	for range 5 {
		if _, err := c.Analyze(ctx, " "+link); err == nil {
			t.Fatal("the lying FLAC was accepted from the cache")
		}
	}
	if got := requests.Load(); got != sent {
		t.Errorf("five analyses more within the minute read the link %d more times; want 0", got-sent)
	}
	now = now.Add(61 * time.Second)
	c.Analyze(ctx, link)
	if requests.Load() == sent {
		t.Error("a minute later, the link was not read again")
	}
	for i := range 10 {
		c.Analyze(ctx, fmt.Sprintf("%s/missing-%d.flac", srv.URL, i))
	}
	if n := len(c.entries); n > 3 {
		t.Errorf("%d analyses kept; want at most 3", n)
	}
	// A visitor who leaves does not leave their cancelled analysis behind.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Analyze(gone, srv.URL+"/other.flac"); !errors.Is(err, context.Canceled) {
		t.Logf("cancelled analysis: %v", err)
	}
	if _, ok := c.entries[srv.URL+"/other.flac"]; ok {
		t.Error("a cancelled analysis is kept")
	}
}
