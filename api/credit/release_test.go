package credit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// ledgerOf is the fixture's ledger as another process, holder, uses it.
func (f *fixture) ledgerOf(holder string) *Ledger {
	l := *f.credit.Ledger
	l.cfg.Holder = holder
	return &l
}

// conserved checks a key's money: what was bought is its balance, what its calls hold, what
// they spent and what was refunded.
func (f *fixture) conserved(id string, spent int64) Key {
	f.t.Helper()
	k, err := f.credit.Ledger.Key(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	if k.Amount*1000 != k.Balance+k.Held+spent+k.Refunded*1000 {
		f.t.Errorf("bought %d ≠ balance %d + held %d + settled %d + refunded %d", k.Amount*1000, k.Balance, k.Held, spent, k.Refunded*1000)
	}
	return k
}

// Five holds of a killed node, then twenty calls at once, each node's reconciler releasing
// the dead holds as it goes: every stale hold is given back once, so the balance is what
// was bought less what was settled (before, each caller paid each stale hold back again:
// 1,019.21 c of 1,000 on Postgres). And twenty releases of one hold at once give it back once.
func TestDeadHoldsAndConcurrentCallsGiveEachHoldBackOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, k := f.buy(1000)
	dead, live := f.ledgerOf("node-a"), f.ledgerOf("node-b")
	for range 5 {
		if _, err := dead.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 97, Amount: 9_603}); err != nil {
			t.Fatal(err)
		}
	}
	var spent atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := live.ReleaseDead(ctx, []string{"node-b"}); err != nil {
				t.Error(err)
			}
			h, err := live.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 97, Amount: 9_603})
			if err == nil {
				err = live.Settle(ctx, h)
			}
			if err != nil {
				t.Error(err)
				return
			}
			spent.Add(h.Amount)
		}()
	}
	wg.Wait()
	if got := f.conserved(k.ID, spent.Load()); got.Held != 0 || got.Balance != 1_000_000-spent.Load() {
		t.Errorf("balance %d, held %d after 20 settled calls; want %d and 0", got.Balance, got.Held, 1_000_000-spent.Load())
	}
	before := f.balance(k.ID)
	h, err := live.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 1, Amount: 5_000})
	if err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := live.Release(ctx, h); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if got := f.conserved(k.ID, spent.Load()); got.Balance != before {
		t.Errorf("balance %d after 20 releases of one hold, want %d", got.Balance, before)
	}
}

// A frozen node's hold is released (its process counted dead) and the client's retry
// retakes the row; the frozen node's late Release or Settle names the earlier take and
// changes nothing: the retry's hold stays held, and its settle charges once.
func TestALateReleaseOfARetakenHoldLeavesTheRetrysHold(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, k := f.buy(500)
	frozen, retry := f.ledgerOf("node-a"), f.ledgerOf("node-b")
	call := Call{Model: "tts-1", Units: 120, Amount: 11_880, Idem: "retried", Fingerprint: "a"}
	first, err := frozen.Hold(ctx, k.ID, call)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := retry.ReleaseDead(ctx, []string{"node-b"}); n != 1 || err != nil {
		t.Fatalf("released %d, %v; want the frozen node's hold", n, err)
	}
	second, err := retry.Hold(ctx, k.ID, call)
	if err != nil || second.ID != first.ID || second.Gen != first.Gen+1 || second.Holder != "node-b" {
		t.Fatalf("the retry: %+v, %v; want the same row's next take, by node-b (first %+v)", second, err, first)
	}
	if err := frozen.Release(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := frozen.Settle(ctx, first); err == nil {
		t.Error("the frozen node's late settle of its released take succeeded")
	}
	if got := f.conserved(k.ID, 0); got.Held != 11_880 || got.Balance != 500_000-11_880 {
		t.Errorf("after the late release: balance %d, held %d; want the retry's hold kept", got.Balance, got.Held)
	}
	if err := retry.Settle(ctx, second); err != nil {
		t.Fatal(err)
	}
	if got := f.conserved(k.ID, 11_880); got.Held != 0 || got.Calls != 1 {
		t.Errorf("after the retry's settle: held %d, %d calls; want 0 and 1", got.Held, got.Calls)
	}
}

// A node killed mid-call leaves its hold; the operator revokes the key, whose refund is
// refused while the hold stands. ReleaseDead gives back the dead node's hold (a live node's
// stays) and the key is then refunded whole.
func TestReleaseDeadLetsAKilledNodesKeyBeRefunded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, k := f.buy(500)
	_, other := f.buy(500)
	killed, live := f.ledgerOf("node-a"), f.ledgerOf("node-b")
	if _, err := killed.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 97, Amount: 9_603}); err != nil {
		t.Fatal(err)
	}
	running, err := live.Hold(ctx, other.ID, Call{Model: "tts-1", Units: 1, Amount: 990})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.credit.Keyring.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.credit.Keyring.Refund(ctx, k.ID); !errors.Is(err, ErrRefused) {
		t.Fatalf("refund while the dead node's hold stands: %v; want ErrRefused", err)
	}
	if n, err := live.ReleaseDead(ctx, []string{"node-b"}); n != 1 || err != nil {
		t.Fatalf("released %d, %v; want the killed node's hold only", n, err)
	}
	if err := f.credit.Keyring.Refund(ctx, k.ID); err != nil {
		t.Fatalf("refund after the dead hold's release: %v", err)
	}
	if got := f.conserved(k.ID, 0); got.Status != StatusRefunded || got.Refunded != 500 || got.Held != 0 {
		t.Errorf("the refunded key: %+v; want all 500 cents refunded", got)
	}
	if err := live.Settle(ctx, running); err != nil {
		t.Errorf("the live node's call lost its hold: %v", err)
	}
}

// A call's release after its key was revoked gives the price back to the ended key, where
// nothing spends it and its refund returns it; a refund and holds racing never leave a
// refunded key with a hold, nor credit beyond the fraction of a cent it keeps.
func TestAReleaseAfterRevokingNeverMakesAnEndedKeySpendable(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	secret, k := f.buy(500)
	h, err := f.credit.Ledger.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 1, Amount: 9_603})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.credit.Keyring.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.credit.Ledger.Release(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := f.credit.Ledger.Authenticate(ctx, secret); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("the revoked key after a release: %v", err)
	}
	if _, err := f.credit.Ledger.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 1, Amount: 1}); !errors.Is(err, ErrInsufficient) {
		t.Errorf("a hold on the revoked key after a release: %v", err)
	}
	if err := f.credit.Keyring.Refund(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if got := f.conserved(k.ID, 0); got.Refunded != 500 {
		t.Errorf("refunded %d cents, want the 500 the release gave back", got.Refunded)
	}
	_, raced := f.buy(500)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := f.credit.Ledger.Hold(ctx, raced.ID, Call{Model: "tts-1", Units: 1, Amount: 1_500})
			if errors.Is(err, ErrInsufficient) {
				return
			}
			if err == nil {
				err = f.credit.Ledger.Release(ctx, h)
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	f.credit.Keyring.Refund(ctx, raced.ID)
	wg.Wait()
	if got := f.conserved(raced.ID, 0); got.Status == StatusRefunded && (got.Balance >= 1000 || got.Held != 0) {
		t.Errorf("a refunded key keeps %d spendable-sized and %d held", got.Balance, got.Held)
	}
}
