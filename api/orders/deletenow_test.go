package orders

import (
	"context"
	"sync"
	"testing"
	"time"

	"parla/providers/testkit"
)

// "Delete now" on an order whose result is stored but whose run has not finished (its
// letter on the way) ends it as deleted, expired, at once: a run that takes it over
// after its runner died, and the runner itself if it resumes, leave it so. (Before, the
// mark kept it processing, and a takeover, refused by the mark, left it so for ever.)
func TestDeleteNowWhileProcessingEndsDeleted(t *testing.T) {
	stored := make(chan string, 1)
	resume := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(resume) }) }
	f := newFixture(t, func(c *Config) {
		c.Checkpoint = func(id, step string) {
			if step == "stored" {
				stored <- id
				<-resume
			}
		}
	})
	t.Cleanup(release) // before the fixture stops, which waits for the run
	ctx := context.Background()
	co := f.order(t, "Deleted before its run finished.")
	f.pay(t, co.SessionID)
	select {
	case <-stored:
	case <-time.After(30 * time.Second):
		t.Fatal("the result was never stored")
	}
	o, err := f.book.orders.Get(ctx, co.OrderID)
	if err != nil || o.Status != Processing || o.ResultKey == "" {
		t.Fatalf("before delete now: %s, result %q, %v", o.Status, o.ResultKey, err)
	}
	if err := f.book.Results.Erase(ctx, o); err != nil {
		t.Fatal(err)
	}
	if o, _ = f.book.orders.Get(ctx, co.OrderID); o.Status != Expired {
		t.Fatalf("after delete now the order is %s, want expired", o.Status)
	}
	// Its runner died: another run takes the job over.
	if err := f.book.fulfil.fulfil(ctx, co.OrderID, func() error { return nil }); err != nil {
		t.Errorf("a takeover after delete now: %v", err)
	}
	// Or it resumes.
	release()
	if !testkit.WaitFor(10*time.Second, func() bool { s := f.jobState(t); return s != "running" && s != "available" }) {
		t.Fatalf("the job is still %s", f.jobState(t))
	}
	if o, _ = f.book.orders.Get(ctx, co.OrderID); o.Status != Expired || o.ResultKey != "" {
		t.Errorf("in the end the order is %s, result %q; want expired, none", o.Status, o.ResultKey)
	}
}
