package orders

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/storage"
	"parla/providers/testkit"
)

// Saves of the visitor's edit racing "delete now" leave nothing of the saved text behind:
// 20 saves and a delete at once, ten rounds in a row, on local disk and on MinIO. (Before
// the delete marked the row first and saves checked the mark, a save that had read the
// order before the delete wrote edited.json after it, for good.)
func TestSavesRacingDeleteLeaveNoText(t *testing.T) {
	t.Run("disk", func(t *testing.T) {
		for round := range 10 {
			f, o, _ := deliveredTranscript(t)
			raceSavesAndDelete(t, f, o, round)
			if left := filesHolding(t, f.files.Dir(), "SECRET-"); len(left) > 0 {
				t.Fatalf("round %d: the saved text outlived delete now in %v", round, left)
			}
		}
	})
	t.Run("minio", func(t *testing.T) {
		srv := testkit.StartMinIO(t)
		for round := range 10 {
			var m *storage.MinIO
			f, o, _ := deliveredTranscriptDeps(t, func(d *Deps) {
				var err error
				m, err = storage.NewMinIO(context.Background(), storage.MinIOConfig{Endpoint: srv.Endpoint,
					AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Bucket: fmt.Sprintf("race-%d", round)})
				if err != nil {
					t.Fatal(err)
				}
				d.Storage = m
			})
			raceSavesAndDelete(t, f, o, round)
			if left := objectsHolding(t, m, "SECRET-"); len(left) > 0 {
				t.Fatalf("round %d: the saved text outlived delete now in %v", round, left)
			}
		}
	})
}

// raceSavesAndDelete saves 20 edits at once and presses "delete now" among them, a little
// later in each round.
func raceSavesAndDelete(t *testing.T, f *fixture, o Order, round int) {
	t.Helper()
	ctx := context.Background()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			text := fmt.Sprintf("SECRET-%d-%d %s", round, i, strings.Repeat("words of the visitor ", 50))
			f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, text)})
		}()
	}
	erased := make(chan error, 1)
	go func() {
		<-start
		time.Sleep(time.Duration(round) * time.Millisecond)
		erased <- f.book.Results.Erase(ctx, o)
	}()
	close(start)
	wg.Wait()
	if err := <-erased; err != nil {
		t.Fatalf("round %d: delete now: %v", round, err)
	}
	if _, err := f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, "SECRET-after")}); err == nil {
		t.Fatalf("round %d: a save after delete now was accepted", round)
	}
}

// filesHolding lists the files under dir (hidden ones too) whose bytes contain text.
func filesHolding(t *testing.T, dir, text string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), text) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// objectsHolding lists the objects of a MinIO bucket whose bytes contain text.
func objectsHolding(t *testing.T, m *storage.MinIO, text string) []string {
	t.Helper()
	ctx := context.Background()
	entries, err := m.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		obj, err := m.Get(ctx, e.Key)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(obj.Body)
		obj.Body.Close()
		if strings.Contains(string(b), text) {
			out = append(out, e.Key)
		}
	}
	return out
}

// deliveredTranscriptDeps is deliveredTranscript with the dependencies edited.
func deliveredTranscriptDeps(t *testing.T, editDeps func(*Deps)) (*fixture, Order, Editable) {
	t.Helper()
	f := newFixtureDeps(t, nil, editDeps)
	ctx := context.Background()
	u, _, err := f.upload(t, "10s")
	if err != nil {
		t.Fatal(err)
	}
	co, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(u.ID, ""))
	if err != nil {
		t.Fatal(err)
	}
	f.pay(t, co.SessionID)
	o := f.waitStatus(t, co.OrderID, Done)
	e, err := f.book.Results.Editable(ctx, o)
	if err != nil {
		t.Fatalf("editable %+v, %v", e, err)
	}
	return f, o, e
}
