package orders

import (
	"context"
	"testing"
	"time"

	"parla/providers/testkit"
)

func TestQueuePositionCountsTheWaitingOrdersAhead(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Workers = 1 })
	hold := make(chan struct{})
	f.speaker.hold.Store(&hold)
	ctx := context.Background()
	var ids []string
	for _, text := range []string{"First.", "Second.", "Third."} {
		co := f.order(t, text)
		f.pay(t, co.SessionID)
		ids = append(ids, co.OrderID)
	}
	f.waitStatus(t, ids[0], Processing)
	position := func(id string) int {
		o, err := f.book.orders.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.book.QueuePosition(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The one being produced waits for nobody; the others wait for those paid before.
	var got []int
	if !testkit.WaitFor(5*time.Second, func() bool {
		got = []int{position(ids[0]), position(ids[1]), position(ids[2])}
		return got[0] == 0 && got[1] == 1 && got[2] == 2
	}) {
		t.Fatalf("queue positions %v, want [0 1 2]", got)
	}
	close(hold)
	for _, id := range ids {
		f.waitStatus(t, id, Done)
		if p := position(id); p != 0 {
			t.Errorf("done order %s has queue position %d", id, p)
		}
	}
}
