package orders

import (
	"context"
	"testing"
	"time"

	"parla/providers/testkit"
)

// A node that boots does not judge others: right after an outage of the database every
// node's heartbeat is stale, the live ones' too. Only after a run of its own regular beats
// does it take a silent node's job. (Before, the boot took it at once.)
func TestBootJudgesNoOneUntilItsBeatsAreRegular(t *testing.T) {
	f, co := runningOnAnotherNode(t, "stale-node")
	db, ctx := f.book.Desk.orders.db, context.Background()
	f.exec(t, `UPDATE nodes SET seen_at = seen_at - ? WHERE id = 'stale-node'`, (time.Hour).Milliseconds())
	booted := time.Now()
	f.restart(t)
	var state string
	db.QueryRowContext(ctx, `SELECT state FROM river_job WHERE kind = 'fulfil'`).Scan(&state)
	if state != "running" {
		t.Fatalf("the stale node's job is %q right after boot, want running until this node beats regularly", state)
	}
	// Then, after judgeAfterBeats regular beats, it is taken and delivered.
	if !testkit.WaitFor(judgeAfterBeats*heartbeatEvery+nodeDeadAfter+30*time.Second, func() bool {
		o, _ := f.book.orders.Get(ctx, co.OrderID)
		return o.Status == Done
	}) {
		t.Fatalf("the stale node's order was never taken over")
	}
	if took := time.Since(booted); took < (judgeAfterBeats-1)*heartbeatEvery {
		t.Errorf("taken over %s after boot, before %d regular beats", took, judgeAfterBeats)
	}
}
