package links

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestFetchFromAHostWithoutRangesReadsOnlyWhatWasPaidFor: after payment, a host without
// byte ranges was read whole (up to 4 GiB) before the audio's length was checked. Now it
// is read only as far as the paid length can hold (fetchBound): a host that serves a file
// far bigger than the one analysed (the clip and 256 MiB more) is cut off within a few
// megabytes and refused, and the clip itself, served as analysed, is still fetched.
func TestFetchFromAHostWithoutRangesReadsOnlyWhatWasPaidFor(t *testing.T) {
	clips := makeLinkClips(t)
	clip, err := os.ReadFile(clips.path("clip.mkv"))
	if err != nil {
		t.Fatal(err)
	}
	const bloat = 256 << 20
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No byte ranges: every request gets the whole file.
		size := int64(len(clip))
		if r.URL.Path == "/bloated.mkv" {
			size += bloat
		}
		w.Header().Set("Content-Length", fmt.Sprint(size))
		w.Header().Set("Content-Type", "video/x-matroska")
		n, _ := w.Write(clip)
		served.Add(int64(n))
		if r.URL.Path == "/bloated.mkv" {
			m, _ := io.CopyN(w, zeros{}, bloat)
			served.Add(m)
		}
	}))
	t.Cleanup(srv.Close)
	r := newLinkResolver(t, ResolverConfig{AnalyzeTimeout: 2 * time.Minute})
	ctx := context.Background()
	info, err := r.Analyze(ctx, srv.URL+"/clip.mkv")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(clip)) {
		t.Errorf("analysed size %d; want %d", info.Size, len(clip))
	}
	dir := t.TempDir()
	if err := r.FetchAudio(ctx, info, filepath.Join(dir, "fine.mka")); err != nil {
		t.Fatalf("fetching the clip as analysed: %v", err)
	}

	bloated := info
	bloated.URL = srv.URL + "/bloated.mkv"
	served.Store(0)
	err = r.FetchAudio(ctx, bloated, filepath.Join(dir, "bloated.mka"))
	limit, _ := fetchBound(bloated, r.cfg.Guard.cfg.MaxBytes)
	t.Logf("a %d-byte clip paid for %s: read at most %d bytes; the host sent %d of %d", len(clip),
		info.Duration.Round(time.Millisecond), limit, served.Load(), len(clip)+bloat)
	if !errors.Is(err, ErrTooLong) {
		t.Errorf("fetching a file far bigger than analysed: %v; want ErrTooLong", err)
	}
	// The host writes on until its socket buffers fill; the bound is what was read.
	if got := served.Load(); got > limit+16<<20 {
		t.Errorf("the host sent %d bytes; want at most the bound (%d) and the network's buffers", got, limit)
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestFetchBound: what a host without ranges may send after payment grows with the paid
// length and its margin (100 s paid: 103 s), at twice the analysed file's rate, and never passes GuardConfig.MaxBytes.
func TestFetchBound(t *testing.T) {
	const most = 4 << 30
	tests := []struct {
		name    string
		info    LinkInfo
		want    int64
		paidFor bool
	}{
		{"size known", LinkInfo{Duration: 100 * time.Second, Size: 10 << 20}, 103*2*(10<<20)/100 + fetchSlack, true},
		{"size unknown", LinkInfo{Duration: 100 * time.Second}, 103*fetchMaxRate + fetchSlack, true},
		{"no length", LinkInfo{Size: 10 << 20}, most, false},
		{"past the guard's cap", LinkInfo{Duration: 3 * time.Hour}, most, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, paidFor := fetchBound(tt.info, most)
			if d := got - tt.want; d < -1 || d > 1 || paidFor != tt.paidFor {
				t.Errorf("fetchBound = %d, %v; want %d, %v", got, paidFor, tt.want, tt.paidFor)
			}
		})
	}
}
