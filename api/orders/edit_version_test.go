package orders

import (
	"context"
	"errors"
	"io"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/providers"
)

// A change names the version of the text it started from: a stale one is refused with
// ErrEditConflict and changes nothing; each change moves the version on by one;
// AnyVersion takes whichever is current.
func TestEditsCarryAVersion(t *testing.T) {
	f, o, _ := deliveredTranscript(t)
	ctx := context.Background()
	one := []providers.Segment{seg(0, time.Second, "First.")}
	if _, v, err := f.book.Results.SaveEdit(ctx, o, one, 0); err != nil || v != 1 {
		t.Fatalf("the first save: %d, %v", v, err)
	}
	if _, _, err := f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, "Stale.")}, 0); !errors.Is(err, ErrEditConflict) {
		t.Errorf("a save from version 0 after version 1: %v", err)
	}
	if _, err := f.book.Results.Revert(ctx, o, 0); !errors.Is(err, ErrEditConflict) {
		t.Errorf("a revert from version 0 after version 1: %v", err)
	}
	if text := servedText(t, f, o); text != "First.\n" {
		t.Errorf("after the refused changes the link serves %q", text)
	}
	if e, err := f.book.Results.Editable(ctx, o); err != nil || e.Version != 1 {
		t.Errorf("the version read back: %d, %v", e.Version, err)
	}
	if v, err := f.book.Results.Revert(ctx, o, 1); err != nil || v != 2 {
		t.Errorf("a revert from the current version: %d, %v", v, err)
	}
	if _, v, err := f.book.Results.SaveEdit(ctx, o, one, AnyVersion); err != nil || v != 3 {
		t.Errorf("a save from any version: %d, %v", v, err)
	}
	if v, err := f.book.Results.EditVersion(ctx, o.ID); err != nil || v != 3 {
		t.Errorf("the row's version: %d, %v", v, err)
	}
}

// A save held up between reading the version and recording its own (a node frozen there)
// loses to a save made meanwhile when it resumes: the later text stays, the parked one's
// file goes. (Last writer won: the parked save overwrote the later one.)
func TestParkedSaveLosesToALaterOne(t *testing.T) {
	park := &parkFirstEdit{parked: make(chan struct{}), resume: make(chan struct{})}
	f, o, _ := deliveredTranscriptDeps(t, func(d *Deps) {
		park.Storage = d.Storage
		d.Storage = park
	})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, _, err := f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, "Parked.")}, 0)
		done <- err
	}()
	select {
	case <-park.parked:
	case <-time.After(30 * time.Second):
		t.Fatal("the first save never wrote its file")
	}
	if _, v, err := f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, "Later.")}, 0); err != nil || v != 1 {
		t.Fatalf("the later save: %d, %v", v, err)
	}
	close(park.resume)
	if err := <-done; !errors.Is(err, ErrEditConflict) {
		t.Errorf("the parked save, resumed: %v", err)
	}
	if text := servedText(t, f, o); text != "Later.\n" {
		t.Errorf("the link serves %q, want the later save", text)
	}
	if left := filesHolding(t, f.files.Dir(), "Parked."); len(left) != 0 {
		t.Errorf("the parked save's file stayed: %v", left)
	}
}

// parkFirstEdit is storage whose first write of a visitor's edit waits until resume.
type parkFirstEdit struct {
	providers.Storage
	first          atomic.Bool // taken by the first edit written
	parked, resume chan struct{}
}

func (p *parkFirstEdit) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	err := p.Storage.Put(ctx, key, r, size, contentType)
	if strings.HasPrefix(path.Base(key), "edited-") && p.first.CompareAndSwap(false, true) {
		close(p.parked)
		<-p.resume
	}
	return err
}

// Saves racing from one version, at once: exactly one wins, the others are refused, and
// the link serves the winner's text.
func TestRacingSavesFromOneVersionOneWins(t *testing.T) {
	f, o, _ := deliveredTranscript(t)
	ctx := context.Background()
	const n = 8
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, _, errs[i] = f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, "Save "+string(rune('A'+i))+".")}, 0)
		}()
	}
	close(start)
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won < 0:
			won = i
		case err == nil:
			t.Errorf("saves %d and %d both won", won, i)
		case !errors.Is(err, ErrEditConflict):
			t.Errorf("save %d: %v", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no save won")
	}
	if want := "Save " + string(rune('A'+won)) + ".\n"; servedText(t, f, o) != want {
		t.Errorf("the link serves %q, want %q", servedText(t, f, o), want)
	}
}

// The editor starts from the cues as they were delivered: what the cleaner dropped (an
// annotation, "Thank you." over silence) is not among them, so a save of those cues with
// one corrected brings none of it back, in any format; and the saved cues are served as
// written.
func TestEditorStartsFromTheDeliveredCues(t *testing.T) {
	f, o, e := deliveredTranscript(t)
	ctx := context.Background()
	s := time.Second
	raw := e.Original
	raw.Segments = []providers.Segment{seg(0, s, "One."), seg(s, 2*s, "[MUSIC]"), seg(2*s, 10*s, "Thank you.")}
	f.keepTranscript(t, o, raw)
	e, err := f.book.Results.Editable(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	cues := e.Delivered().Segments
	if len(cues) != 1 || cues[0].Text != "One." {
		t.Fatalf("the editor starts from %+v", cues)
	}
	cues[0].Text = "Uno."
	if _, _, err := f.book.Results.SaveEdit(ctx, o, cues, e.Version); err != nil {
		t.Fatal(err)
	}
	for _, format := range providers.TranscriptFormats {
		body, _, _, err := f.book.Results.OtherFormat(ctx, o, format)
		if err != nil || !strings.Contains(string(body), "Uno.") || strings.Contains(string(body), "MUSIC") || strings.Contains(string(body), "Thank") {
			t.Errorf("%s after correcting one cue: %v\n%s", format, err, body)
		}
	}
}

// servedText is the link's transcript in the text format.
func servedText(t *testing.T, f *fixture, o Order) string {
	t.Helper()
	body, _, _, err := f.book.Results.OtherFormat(context.Background(), o, "text")
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
