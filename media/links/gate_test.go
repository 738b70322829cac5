package links

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"parla/media"
	"parla/providers/testkit"
)

// A fetch of a paid link is engine work like an ffmpeg run: with the process gate closed
// (a runner that may have lost its order) none starts, neither a direct link's nor
// YouTube's, no request reaches the source, and the gate's error is returned; with the
// gate open the fetch is as without one.
func TestFetchAudioPassesTheGate(t *testing.T) {
	runner := newRunner(t)
	lost := errors.New("lost")
	var shut atomic.Bool
	closed := media.WithProcessGate(context.Background(), func() error { return lost })
	open := media.WithProcessGate(context.Background(), func() error { return nil })
	closing := media.WithProcessGate(context.Background(), func() error {
		if shut.Load() {
			return lost
		}
		return nil
	})

	clip := testkit.Speech(t, t.TempDir(), "clip.mp3", "Fetched only by the owner of the order.")
	var direct atomic.Int32
	var closeOnFirst atomic.Bool // the gate closes as the first request reaches the source
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		direct.Add(1)
		if closeOnFirst.Load() {
			shut.Store(true)
		}
		http.ServeFile(w, r, clip)
	}))
	t.Cleanup(srv.Close)

	yt := newYTFake(t)
	yt.media["249"], yt.media["251"], yt.media["140"] = ytWebm(t), ytWebm(t), ytM4A(t)
	r := newLinkResolver(t, ResolverConfig{Runner: runner, Sites: []Site{yt.youTube(0)}})

	for _, tt := range []struct {
		name     string
		info     LinkInfo
		requests func() int
	}{
		{"direct", LinkInfo{Site: SiteDirect, URL: srv.URL + "/clip.mp3", Duration: 3 * time.Second}, func() int { return int(direct.Load()) }},
		{"youtube", LinkInfo{Site: "youtube", URL: youTubeWatchURL("NormalVid01"), ID: "NormalVid01"}, func() int { yt.mu.Lock(); defer yt.mu.Unlock(); return len(yt.requests) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "audio")
			if err := r.FetchAudio(closed, tt.info, dst); !errors.Is(err, lost) {
				t.Errorf("gate closed: FetchAudio = %v, want the gate's error", err)
			}
			if n := tt.requests(); n != 0 {
				t.Errorf("gate closed: %d requests reached the source, want none", n)
			}
			if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("gate closed: %s written (%v)", dst, err)
			}
			if err := r.FetchAudio(open, tt.info, dst); err != nil {
				t.Fatalf("gate open: FetchAudio = %v", err)
			}
			if info, err := runner.Probe(context.Background(), dst); err != nil || info.Duration <= 0 || tt.requests() == 0 {
				t.Errorf("gate open: fetched %+v (%v) in %d requests, want audio", info, err, tt.requests())
			}
		})
	}

	// The gate closes while a direct fetch asks its source whether it serves ranges: ffmpeg
	// is not started, and the error is the gate's, not the link's (ErrNotMedia would have
	// the order refunded as a link that is no media).
	t.Run("gate closing mid-fetch", func(t *testing.T) {
		closeOnFirst.Store(true)
		err := r.FetchAudio(closing, LinkInfo{Site: SiteDirect, URL: srv.URL + "/clip.mp3", Duration: 3 * time.Second}, filepath.Join(t.TempDir(), "audio"))
		if !errors.Is(err, lost) || errors.Is(err, ErrNotMedia) {
			t.Errorf("FetchAudio = %v, want the gate's error alone", err)
		}
	})
}
