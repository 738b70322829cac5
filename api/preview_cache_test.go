package api

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/api/orders"
	"parla/providers"
)

// countingSpeaker writes size bytes per call, slowly, and counts its calls.
type countingSpeaker struct {
	calls atomic.Int32
	size  int
}

func (s *countingSpeaker) Available() error { return nil }
func (s *countingSpeaker) Speak(ctx context.Context, r providers.SpeechRequest, w io.Writer) error {
	s.calls.Add(1)
	time.Sleep(20 * time.Millisecond) // under test: a slow production that ten visitors overlap
	_, err := w.Write(bytes.Repeat([]byte(r.Text[:1]), s.size))
	return err
}

func TestPreviewCacheProducesOncePerKeyAndStaysWithinItsSize(t *testing.T) {
	sp := &countingSpeaker{size: 400}
	pc := newPreviewCache(t.TempDir(), sp)
	pc.limit = 1000 // two previews fit, not three
	speech := func(text string) providers.SpeechRequest {
		return providers.SpeechRequest{Voice: "nova", Format: "mp3", Speed: 1, Text: text, Language: "en"}
	}
	req := func(text string) orders.Preview { return orders.Preview{Speech: speech(text), Ext: "mp3"} }
	// Ten visitors asking for the same preview at once: one production.
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := pc.path(context.Background(), "192.0.2.1", req("a")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := sp.calls.Load(); n != 1 {
		t.Fatalf("%d productions for one preview", n)
	}
	// Another speed, language or engine is another preview.
	other := speech("a")
	other.Language = "es"
	if previewKey("192.0.2.1", other, nil) == previewKey("192.0.2.1", speech("a"), nil) {
		t.Error("language not in the key")
	}
	other = speech("a")
	other.Speed = 1.5
	if previewKey("192.0.2.1", other, nil) == previewKey("192.0.2.1", speech("a"), nil) {
		t.Error("speed not in the key")
	}
	other = speech("a")
	other.DetectParagraphs = true
	if previewKey("192.0.2.1", other, nil) == previewKey("192.0.2.1", speech("a"), nil) {
		t.Error("each paragraph in its language: not in the key")
	}
	if previewKey("192.0.2.1", speech("a"), nil) == previewKey("192.0.2.2", speech("a"), nil) {
		t.Error("the client not in the key")
	}
	if previewKey("192.0.2.1", speech("a"), []string{"eSpeak NG"}) == previewKey("192.0.2.1", speech("a"), []string{"Kokoro"}) {
		t.Error("the engine not in the key")
	}
	// b, then c: a (least recently used) goes, b and c stay. The order of use is told by
	// modification times: a's is set a minute back rather than waiting for the clock.
	old := time.Now().Add(-time.Minute)
	if as, _ := filepath.Glob(filepath.Join(pc.dir, "*")); len(as) != 1 || os.Chtimes(as[0], old, old) != nil {
		t.Fatalf("the cache holds %v, want a's preview alone", as)
	}
	pb, _, _ := pc.path(context.Background(), "192.0.2.1", req("b"))
	pcPath, _, _ := pc.path(context.Background(), "192.0.2.1", req("c"))
	files, _ := filepath.Glob(filepath.Join(pc.dir, "*"))
	if len(files) != 2 {
		t.Fatalf("cache holds %d files, want 2 (limit 1000 bytes)", len(files))
	}
	for _, p := range []string{pb, pcPath} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("recent preview deleted: %v", err)
		}
	}
	if _, cached, _ := pc.path(context.Background(), "192.0.2.1", req("a")); cached {
		t.Error("the oldest preview was not deleted")
	}
}
