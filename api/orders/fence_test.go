package orders

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
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
				d.Storage = slowEdits{m}
			})
			raceSavesAndDelete(t, f, o, round)
			if left := objectsHolding(t, m, "SECRET-"); len(left) > 0 {
				t.Fatalf("round %d: the saved text outlived delete now in %v", round, left)
			}
		}
	})
}

// slowEdits is MinIO whose writes of a visitor's edit take editWrite longer, as on a loaded
// node or a slow store: "delete now" then lands, in most rounds, between a save's file and
// its record on the row, the window the record's check of the mark must close. (Without it the
// MinIO round trips were too quick: removing that check failed the test in 1 of 2 runs.)
type slowEdits struct{ *storage.MinIO }

const editWrite = 100 * time.Millisecond

func (s slowEdits) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if strings.HasPrefix(path.Base(key), "edited-") {
		time.Sleep(editWrite)
	}
	return s.MinIO.Put(ctx, key, r, size, contentType)
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
			f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, text)}, AnyVersion)
		}()
	}
	erased := make(chan error, 1)
	go func() {
		<-start
		time.Sleep(time.Duration(round*round) * time.Millisecond) // 0 to 81 ms: early and late in the saves
		erased <- f.book.Results.Erase(ctx, o)
	}()
	close(start)
	wg.Wait()
	if err := <-erased; err != nil {
		t.Fatalf("round %d: delete now: %v", round, err)
	}
	if _, _, err := f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, "SECRET-after")}, AnyVersion); err == nil {
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

// A runner whose claim was taken while it produced (another node took the order over)
// stores no result, sends no letter, removes what it wrote and ends its job without a
// retry; the order stays the other runner's. (Before the fence, it delivered over the
// winner's result.)
func TestRunnerThatLostItsClaimWritesNothing(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co, release := f.producing(t, "Taken over while spoken.")
	f.exec(t, `UPDATE orders SET claim = claim + 1 WHERE id = ?`, co.OrderID) // the other runner's claim
	release()
	if !testkit.WaitFor(10*time.Second, func() bool { return f.jobState(t) == "cancelled" }) {
		t.Fatalf("the job is %s, want cancelled", f.jobState(t))
	}
	o, _ := f.book.orders.Get(ctx, co.OrderID)
	if o.Status != Processing || o.ResultKey != "" || o.LinkToken != "" || len(f.mails(t)) != 0 {
		t.Errorf("order %s, result %q, link %q, %d mails; want the other runner's, untouched", o.Status, o.ResultKey, o.LinkToken, len(f.mails(t)))
	}
	if left, _ := f.files.List(ctx, "results/"+co.OrderID+"/"); len(left) != 0 {
		t.Errorf("the loser's objects stayed: %v", left)
	}
}

// Giving an order up (failed then refunded, or finished without its letter) is fenced like
// the run's other writes: a runner whose claim was taken (another node took the order
// over) and then gives up, after its retries or for a permanent failure, changes nothing:
// no failure, no refund, no letter, no finish; the order stays the other runner's. (Before
// the fence, giveUp failed and refunded the order the other runner was delivering.)
func TestGiveUpOfALostClaimChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stored bool // the loser's run had stored a result (only the letter failed)
	}{{"production failed", false}, {"letter failed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			ctx := context.Background()
			hold := make(chan struct{})
			f.speaker.hold.Store(&hold)
			t.Cleanup(func() { close(hold) })
			co := f.order(t, "Given up by a runner that lost it.")
			f.pay(t, co.SessionID)
			f.waitStatus(t, co.OrderID, Processing)
			var stale int64
			if err := f.book.Desk.orders.db.QueryRowContext(ctx, `SELECT claim FROM orders WHERE id = ?`, co.OrderID).Scan(&stale); err != nil {
				t.Fatal(err)
			}
			f.exec(t, `UPDATE orders SET claim = claim + 1 WHERE id = ?`, co.OrderID) // the other runner's
			if tc.stored {
				f.exec(t, `UPDATE orders SET result_key = ? WHERE id = ?`, claimPrefix(co.OrderID, stale+1)+"r.mp3", co.OrderID)
			}
			err := f.book.fulfil.giveUp(ctx, co.OrderID, stale, permanent("engine_failed", errors.New("engine exploded")))
			if !errors.Is(err, ErrClaimLost) {
				t.Errorf("giveUp of a lost claim: %v, want ErrClaimLost", err)
			}
			time.Sleep(time.Second) // a refund job, had one been queued, runs meanwhile
			o, _ := f.book.orders.Get(ctx, co.OrderID)
			refunds, _ := f.test.Refunds(ctx)
			if o.Status != Processing || o.Error != "" || !o.MailedAt.IsZero() || len(refunds) != 0 || len(f.mails(t)) != 0 {
				t.Errorf("order %s (error %q, mailed %v), %d refunds, %d letters; want the other runner's, untouched",
					o.Status, o.Error, o.MailedAt, len(refunds), len(f.mails(t)))
			}
		})
	}
}

// The letter is sent at most once: claimed in the database before it is sent, a claim
// left by a crash between the two is not sent again.
func TestLetterClaimedBeforeItIsSent(t *testing.T) {
	f := newFixture(t, nil)
	co, release := f.producing(t, "A letter claimed and lost.")
	f.exec(t, `UPDATE orders SET mail_claimed_at = 1 WHERE id = ?`, co.OrderID) // a crash after the claim
	release()
	f.waitStatus(t, co.OrderID, Done)
	if n := len(f.mails(t)); n != 0 {
		t.Errorf("%d letters after a claim left unsent, want 0 (Resend is the remedy)", n)
	}
}

// The sweep removes what no order serves: the objects of an order that is gone or erased,
// and those a claim that lost its order left; never the served result.
func TestSweepRemovesOrphans(t *testing.T) {
	f, o, _ := deliveredTranscript(t)
	ctx := context.Background()
	put := func(key string) {
		if err := f.files.Put(ctx, key, strings.NewReader("x"), 1, "text/plain"); err != nil {
			t.Fatal(err)
		}
	}
	stale := claimPrefix(o.ID, 7) + "lost.mp3"
	gone := "results/no-such-order/1/result.mp3"
	put(stale)
	put(gone)
	if _, err := f.book.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	left, _ := f.files.Keys(ctx, "results/")
	if slices.Contains(left, stale) || slices.Contains(left, gone) || !slices.Contains(left, o.ResultKey) {
		t.Errorf("after the sweep: %v (served %s)", left, o.ResultKey)
	}
	// An erased order's objects go too, whatever key they were written under.
	f.exec(t, `UPDATE orders SET erased = 1 WHERE id = ?`, o.ID)
	f.book.Sweep(ctx)
	if left, _ := f.files.Keys(ctx, "results/"+o.ID+"/"); len(left) != 0 {
		t.Errorf("an erased order's objects stayed: %v", left)
	}
}
