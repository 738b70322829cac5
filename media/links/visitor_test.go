package links

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"parla/media"
	"parla/providers/testkit"
)

// TestLyingLinkRefusedAtAnalysis: the FLAC (66 KB, 10 h of 8 kHz audio behind a
// header that says 60 s), analysed by link, is refused as lying, before any price is
// set: its decode stops just past 60 s and its tolerance. Before issue 30 it was priced
// for 60 s after decoding the 10 hours (and refunded after payment).
func TestLyingLinkRefusedAtAnalysis(t *testing.T) {
	dir := t.TempDir()
	testkit.LyingFLAC(t, filepath.Join(dir, "lying.flac"), 8000, 10*time.Hour, time.Minute)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	r := newLinkResolver(t, ResolverConfig{MaxDuration: 3 * time.Hour, AnalyzeTimeout: 2 * time.Minute})
	info, err := r.Analyze(context.Background(), srv.URL+"/lying.flac")
	if !errors.Is(err, media.ErrDurationMismatch) {
		t.Fatalf("the lying FLAC: %+v, %v; want media.ErrDurationMismatch", info, err)
	}
}

// TestLinkAnalysisInTheVisitorsPool: the probe of a link waits for a place in the
// visitors' pool, the one uploads are measured in.
func TestLinkAnalysisInTheVisitorsPool(t *testing.T) {
	dir := t.TempDir()
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "sine=frequency=400:sample_rate=8000:duration=10", "file:"+filepath.Join(dir, "a.flac"))
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	runner := media.New(media.Config{MaxConcurrent: 4, MaxVisitors: 1})
	r := newLinkResolver(t, ResolverConfig{Runner: runner, AnalyzeTimeout: time.Minute})
	release, err := runner.VisitorSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if info, err := r.Analyze(ctx, srv.URL+"/a.flac"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with the visitors' pool full: %+v, %v; want it to wait", info, err)
	}
	release()
	info, err := r.Analyze(context.Background(), srv.URL+"/a.flac")
	if err != nil || !info.SpeechMeasured {
		t.Errorf("with the pool free: %+v, %v", info, err)
	}
}
