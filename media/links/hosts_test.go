package links

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"parla/providers/testkit"
)

// Whatever the host does, what was analysed before payment and what is fetched after it
// agree: the fetched audio lasts what the analysis said (within the 2 s the order book
// tolerates), or the fetch fails with an error that is retried (ErrSourceUnreachable),
// never with a file that would be refunded as changed.
func TestAnalysisAndFetchAgreeWhateverTheHostDoes(t *testing.T) {
	clips := makeLinkClips(t)
	srv := serveClips(t, clips.dir)
	r := newLinkResolver(t, ResolverConfig{})
	ctx := context.Background()
	for _, host := range []string{"files", "plain", "slow", "moved", "short", "cut"} {
		for _, name := range []string{"fast.mp4", "slow.mp4", "clip.mkv"} {
			t.Run(host+"/"+name, func(t *testing.T) {
				info, err := r.Analyze(ctx, srv.URL+"/"+host+"/"+name)
				if err != nil {
					if host == "cut" {
						return // refused before payment: nothing to agree on
					}
					t.Fatalf("Analyze: %v", err)
				}
				dst := filepath.Join(t.TempDir(), "audio.mka")
				err = r.FetchAudio(ctx, info, dst)
				if host == "cut" {
					// Analysis read the head; the audio breaks off halfway, every time.
					if !errors.Is(err, ErrSourceUnreachable) {
						t.Fatalf("a transfer broken off: %v, want a retried %v", err, ErrSourceUnreachable)
					}
					return
				}
				if err != nil {
					t.Fatalf("FetchAudio: %v", err)
				}
				m, err := r.cfg.Runner.CheckPaid(ctx, dst, info.Duration)
				got := m.Length
				if err != nil {
					t.Fatalf("the fetched audio: %v", err)
				}
				if d := got - info.Duration; d > 2*time.Second || d < -2*time.Second {
					t.Errorf("analysed %v, fetched %v", info.Duration, got)
				}
			})
		}
	}
}

// An MP4 indexed at its end, from a host that ignores Range: through the relay, ffmpeg's
// seek to the index restarts the transfer and the copied audio came out broken (Matroska
// "Duplicate element"), and a fine video was refunded. Such hosts are downloaded whole.
func TestMP4IndexedAtTheEndFromAHostWithoutRanges(t *testing.T) {
	testkit.Binary(t, "ffmpeg")
	dir := t.TempDir()
	testkit.Run(t, "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=640x480:r=25",
		"-f", "lavfi", "-i", "sine=frequency=300", "-t", "60", "-c:v", "libx264", "-preset", "ultrafast",
		"-c:a", "aac", filepath.Join(dir, "indexed-at-end.mp4"))
	srv := serveClips(t, dir)
	r := newLinkResolver(t, ResolverConfig{})
	ctx := context.Background()
	info, err := r.Analyze(ctx, srv.URL+"/plain/indexed-at-end.mp4")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "audio.mka")
	if err := r.FetchAudio(ctx, info, dst); err != nil {
		t.Fatal(err)
	}
	m, err := r.cfg.Runner.CheckPaid(ctx, dst, info.Duration)
	got := m.Length
	if err != nil || lengthDiffers(got, info.Duration) {
		t.Errorf("analysed %v, fetched %v (%v)", info.Duration, got, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), "*.source")); len(left) != 0 {
		t.Errorf("the download was left behind: %v", left)
	}
}
