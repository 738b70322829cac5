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

// analysisRefusals are the errors an analysis may refuse a link with: each has a code the
// /vtt page translates (api/errors.go).
var analysisRefusals = []error{ErrNotMedia, ErrLiveStream, ErrTooLong, media.ErrDurationMismatch, media.ErrTooDense}

// TestLinkAnalysisPricesEverySecond (issue 36, item 3): every generated file that bends its
// length (testkit.LyingMedia), analysed as a direct link, is refused with a known code or
// priced (LinkInfo.Duration) at no less than a plain ffmpeg decode of the whole file hears,
// its audio measured at analysis. A header that counts up to the tolerance less than the
// audio used to set the price.
func TestLinkAnalysisPricesEverySecond(t *testing.T) {
	dir := t.TempDir()
	cases := testkit.LyingMedia(t, dir)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	r := newLinkResolver(t, ResolverConfig{MaxDuration: 3 * time.Hour, AnalyzeTimeout: 2 * time.Minute})
	var priced, refused int
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			heard, _ := testkit.HeardPCM(t, c.Path)
			info, err := r.Analyze(context.Background(), srv.URL+"/"+filepath.Base(c.Path))
			if err != nil {
				for _, known := range analysisRefusals {
					if errors.Is(err, known) {
						refused++
						t.Logf("refused: %v (heard %v)", err, heard)
						return
					}
				}
				t.Fatalf("refused with an unknown error: %v", err)
			}
			if !info.SpeechMeasured {
				t.Errorf("priced %v on its header alone", info.Duration)
			}
			if info.Duration < heard-time.Millisecond {
				t.Errorf("priced %v, a plain decode of the whole file hears %v", info.Duration, heard)
			}
			priced++
			t.Logf("priced %v, heard %v", info.Duration, heard)
		})
	}
	t.Logf("%d cases: %d priced, %d refused", len(cases), priced, refused)
}
