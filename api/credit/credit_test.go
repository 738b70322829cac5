package credit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/api/orders"
	"parla/providers"
	"parla/providers/mail"
	"parla/providers/sqldb"
	"parla/providers/stripe"
	"parla/providers/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.RunWithDB(m)) }

// clock is a settable time for the ledger's expiries and stale holds.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is credit over a real database (SQLite, or Postgres with PARLA_TEST_DB=postgres),
// the built-in test checkout and an outbox.
type fixture struct {
	t      *testing.T
	db     *sqldb.DB
	credit *Credit
	pay    *stripe.TestCheckout
	outbox string
	sent   *countingMailer
	clock  *clock
}

// countingMailer counts the sends it passes to the outbox (which keeps one file per
// message id, so a second send of a letter would not show there).
type countingMailer struct {
	providers.Mailer
	n atomic.Int64
}

func (m *countingMailer) Send(ctx context.Context, msg providers.Message) error {
	m.n.Add(1)
	return m.Mailer.Send(ctx, msg)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := testkit.OpenDB(t)
	clk := &clock{t: time.Now()}
	pay, err := stripe.NewTestCheckout(db, "http://parla.test/checkout/test/", clk.now)
	if err != nil {
		t.Fatal(err)
	}
	outbox := filepath.Join(t.TempDir(), "outbox")
	mailer, err := mail.NewOutbox(outbox)
	if err != nil {
		t.Fatal(err)
	}
	sent := &countingMailer{Mailer: mailer}
	c, err := New(context.Background(), Config{PublicURL: "http://parla.test", Page: "/api", Success: "/api-payment/success", Now: clk.now},
		Deps{DB: db, Payments: pay, Mailer: sent, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, db: db, credit: c, pay: pay, outbox: outbox, sent: sent, clock: clk}
}

// buy pays for amount cents of credit through the test checkout, as the webhook tells it,
// and returns the key the confirmation page's first answer shows.
func (f *fixture) buy(amount int64) (secret string, k Key) {
	f.t.Helper()
	ctx := context.Background()
	co, err := f.credit.Shop.Open(ctx, Purchase{Amount: amount, Email: "dev@example.com", EmailVerify: "dev@example.com", Locale: "en"})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.pay.Pay(ctx, co.SessionID); err != nil {
		f.t.Fatal(err)
	}
	session, err := f.pay.GetCheckout(ctx, co.SessionID)
	if err != nil {
		f.t.Fatal(err)
	}
	handled, err := f.credit.Shop.HandleEvent(ctx, orders.PaymentEvent{ID: "evt_" + co.SessionID,
		Type: stripe.EventCheckoutCompleted, Session: session})
	if !handled || err != nil {
		f.t.Fatalf("payment event: handled %v, %v", handled, err)
	}
	r, err := f.credit.Shop.Result(ctx, co.SessionID)
	if err != nil || !r.Full {
		f.t.Fatalf("first result: %+v, %v", r, err)
	}
	k, err = f.credit.Ledger.Authenticate(ctx, r.Key)
	if err != nil {
		f.t.Fatal(err)
	}
	return r.Key, k
}

func (f *fixture) balance(id string) int64 {
	f.t.Helper()
	k, err := f.credit.Ledger.Key(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return k.Balance
}

// Forty calls at once on credit for twenty-five of them: exactly twenty-five are held, the
// rest refused, and the balance ends at zero, never below.
func TestConcurrentHoldsNeverTakeTheBalanceBelowZero(t *testing.T) {
	f := newFixture(t)
	_, k := f.buy(500) // 500,000 thousandths of a cent
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.credit.Ledger.Hold(context.Background(), k.ID, Call{Model: "tts-1", Units: 1, Amount: 20_000})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrInsufficient):
				refused.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 25 || refused.Load() != 15 {
		t.Errorf("%d held, %d refused; want 25 and 15", ok.Load(), refused.Load())
	}
	if b := f.balance(k.ID); b != 0 {
		t.Errorf("balance %d after the holds, want 0", b)
	}
}

// A settled call is charged once; a released one (its work failed) costs nothing, and
// releasing again or after settling changes nothing.
func TestSettleChargesAndReleaseGivesBack(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, k := f.buy(500)
	h, err := f.credit.Ledger.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 120, Amount: 11_880})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.credit.Ledger.Settle(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := f.credit.Ledger.Release(ctx, h); err != nil {
		t.Fatal(err)
	}
	if b := f.balance(k.ID); b != 500_000-11_880 {
		t.Errorf("balance %d after a settled call, want %d", b, 500_000-11_880)
	}
	failed, err := f.credit.Ledger.Hold(ctx, k.ID, Call{Model: "whisper-1", Units: 20_000, Amount: 19_800})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := f.credit.Ledger.Release(ctx, failed); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.credit.Ledger.Settle(ctx, failed); err == nil {
		t.Error("a released hold settled")
	}
	if b := f.balance(k.ID); b != 500_000-11_880 {
		t.Errorf("balance %d after a failed call, want %d", b, 500_000-11_880)
	}
	calls, err := f.credit.Ledger.Recent(ctx, k.ID, 10)
	if err != nil || len(calls) != 2 {
		t.Fatalf("recent calls: %+v, %v", calls, err)
	}
	if k2, _ := f.credit.Ledger.Key(ctx, k.ID); k2.Calls != 1 {
		t.Errorf("%d calls counted, want 1", k2.Calls)
	}
}

// An Idempotency-Key makes a retried call charge once: done again free after it settled,
// refused while it runs or with another request, held again after it failed.
func TestIdempotencyKeyChargesOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, k := f.buy(500)
	call := Call{Model: "tts-1", Units: 120, Amount: 11_880, Idem: "retry-1", Fingerprint: "a"}
	h, err := f.credit.Ledger.Hold(ctx, k.ID, call)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.credit.Ledger.Hold(ctx, k.ID, call); !errors.Is(err, ErrInFlight) {
		t.Errorf("the same key while held: %v, want ErrInFlight", err)
	}
	if err := f.credit.Ledger.Settle(ctx, h); err != nil {
		t.Fatal(err)
	}
	again, err := f.credit.Ledger.Hold(ctx, k.ID, call)
	if err != nil || !again.Repeat {
		t.Fatalf("the same key after settling: %+v, %v; want a free repeat", again, err)
	}
	if err := f.credit.Ledger.Settle(ctx, again); err != nil {
		t.Fatal(err)
	}
	other := call
	other.Fingerprint = "b"
	if _, err := f.credit.Ledger.Hold(ctx, k.ID, other); !errors.Is(err, ErrIdempotencyMismatch) {
		t.Errorf("the same key with another request: %v, want ErrIdempotencyMismatch", err)
	}
	if b := f.balance(k.ID); b != 500_000-11_880 {
		t.Errorf("balance %d, want one charge: %d", b, 500_000-11_880)
	}
	// A failed call under a key is held again by its retry, and charged then.
	failing := Call{Model: "tts-1", Units: 10, Amount: 990, Idem: "retry-2", Fingerprint: "c"}
	h2, err := f.credit.Ledger.Hold(ctx, k.ID, failing)
	if err != nil {
		t.Fatal(err)
	}
	f.credit.Ledger.Release(ctx, h2)
	h3, err := f.credit.Ledger.Hold(ctx, k.ID, failing)
	if err != nil || h3.Repeat || h3.ID != h2.ID {
		t.Fatalf("retry after a failure: %+v, %v", h3, err)
	}
	if b := f.balance(k.ID); b != 500_000-11_880-990 {
		t.Errorf("balance %d after the retry's hold, want %d", b, 500_000-11_880-990)
	}
}

// A settled call's Idempotency-Key answers a lost answer's retries free, but not for good:
// past MaxRepeats answered repeats (failed ones are given back), or RepeatWindow after the
// settling, it is refused and charges nothing; a new key makes a new, charged call.
func TestASettledIdempotencyKeyRepeatsABoundedNumberOfTimes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, k := f.buy(500)
	settledCall := func(idem string) Call {
		call := Call{Model: "tts-1", Units: 120, Amount: 11_880, Idem: idem, Fingerprint: "a"}
		h, err := f.credit.Ledger.Hold(ctx, k.ID, call)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.credit.Ledger.Settle(ctx, h); err != nil {
			t.Fatal(err)
		}
		return call
	}
	call := settledCall("retried")
	// Repeats whose work failed (the engine down) use none up: only answers given count.
	for i := range MaxRepeats + 1 {
		h, err := f.credit.Ledger.Hold(ctx, k.ID, call)
		if err != nil || !h.Repeat {
			t.Fatalf("failed repeat %d: %+v, %v; want a free repeat", i+1, h, err)
		}
		if err := f.credit.Ledger.Release(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	for i := range MaxRepeats {
		if h, err := f.credit.Ledger.Hold(ctx, k.ID, call); err != nil || !h.Repeat {
			t.Fatalf("repeat %d: %+v, %v; want a free repeat", i+1, h, err)
		}
	}
	if _, err := f.credit.Ledger.Hold(ctx, k.ID, call); !errors.Is(err, ErrIdempotencySpent) {
		t.Errorf("repeat %d: %v, want ErrIdempotencySpent", MaxRepeats+1, err)
	}
	late := settledCall("late")
	f.clock.advance(RepeatWindow + time.Minute)
	if _, err := f.credit.Ledger.Hold(ctx, k.ID, late); !errors.Is(err, ErrIdempotencySpent) {
		t.Errorf("a day after the settling: %v, want ErrIdempotencySpent", err)
	}
	if b := f.balance(k.ID); b != 500_000-2*11_880 {
		t.Errorf("balance %d, want two charges: %d", b, 500_000-2*11_880)
	}
}

// Ten retries of one call at once: one hold, nine refused as in progress.
func TestConcurrentRetriesHoldOnce(t *testing.T) {
	f := newFixture(t)
	_, k := f.buy(500)
	var ok, inFlight atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.credit.Ledger.Hold(context.Background(), k.ID, Call{Model: "tts-1", Units: 1, Amount: 1000, Idem: "same", Fingerprint: "x"})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrInFlight):
				inFlight.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || inFlight.Load() != 9 || f.balance(k.ID) != 499_000 {
		t.Errorf("%d held, %d in flight, balance %d; want 1, 9, 499000", ok.Load(), inFlight.Load(), f.balance(k.ID))
	}
}

// A hold its node never settled (it died mid-call) is given back by ReleaseDead after
// StaleHold, whoever holds it (here nobody named: the backstop alone), and not before.
func TestStaleHoldIsGivenBack(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, k := f.buy(500)
	if _, err := f.credit.Ledger.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 1, Amount: 500_000}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.credit.Ledger.ReleaseDead(ctx, nil); n != 0 || err != nil {
		t.Fatalf("a fresh hold with no holder released: %d, %v", n, err)
	}
	if _, err := f.credit.Ledger.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 1, Amount: 1}); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("hold on an empty balance: %v", err)
	}
	f.clock.advance(f.credit.Config().StaleHold + time.Minute)
	if n, err := f.credit.Ledger.ReleaseDead(ctx, nil); n != 1 || err != nil {
		t.Fatalf("stale holds released: %d, %v; want 1", n, err)
	}
	if _, err := f.credit.Ledger.Hold(ctx, k.ID, Call{Model: "tts-1", Units: 1, Amount: 500_000}); err != nil {
		t.Errorf("the stale hold was not given back: %v", err)
	}
}

// The key is shown in full once, mailed once, and afterwards only its hash is kept.
func TestKeyShownOnceMailedOnceThenOnlyItsHashKept(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	secret, k := f.buy(500)
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) < len(KeyPrefix)+32 {
		t.Errorf("key %q", secret)
	}
	r, err := f.credit.Shop.Result(ctx, k.SessionID)
	if err != nil || r.Full || r.Key != KeyPrefix+"…"+secret[len(secret)-4:] || r.Balance != 500_000 {
		t.Errorf("second result: %+v, %v; want the key masked", r, err)
	}
	var letters []string
	testkit.Eventually(t, 10*time.Second, func() bool {
		letters, _ = filepath.Glob(filepath.Join(f.outbox, "*.eml"))
		return len(letters) == 1 && f.sealedGone(k.ID)
	}, "the key's letter")
	msg, _ := os.ReadFile(letters[0])
	if !strings.Contains(string(msg), secret) || !strings.Contains(string(msg), "dev@example.com") {
		t.Errorf("the letter lacks the key or the address:\n%s", msg)
	}
	// Nothing stored holds the key itself: only its SHA-256.
	var hash, sealed string
	if err := f.db.QueryRowContext(ctx, `SELECT key_hash, key_sealed FROM credit_keys WHERE id = ?`, k.ID).Scan(&hash, &sealed); err != nil {
		t.Fatal(err)
	}
	if hash != hashSecret(secret) || sealed != "" {
		t.Errorf("stored hash %q, sealed %q; want the hash only", hash, sealed)
	}
	// Another lookup, another payment event: no second letter.
	f.credit.Shop.Result(ctx, k.SessionID)
	time.Sleep(200 * time.Millisecond)
	if again, _ := filepath.Glob(filepath.Join(f.outbox, "*.eml")); len(again) != 1 {
		t.Errorf("%d letters, want 1", len(again))
	}
}

func (f *fixture) sealedGone(id string) bool {
	var sealed string
	err := f.db.QueryRowContext(context.Background(), `SELECT key_sealed FROM credit_keys WHERE id = ?`, id).Scan(&sealed)
	return err == nil && sealed == ""
}

// Unknown keys, keys of another shape and lapsed credit are refused alike.
func TestAuthenticateRefusesWrongAndLapsedKeys(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	secret, _ := f.buy(500)
	for _, wrong := range []string{"", "sk-parla-", secret + "x", "sk-other-" + secret[len(KeyPrefix):], newSecret()} {
		if _, err := f.credit.Ledger.Authenticate(ctx, wrong); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Authenticate(%q) = %v, want ErrInvalidKey", wrong, err)
		}
	}
	f.clock.advance(f.credit.Config().TTL)
	if _, err := f.credit.Ledger.Authenticate(ctx, secret); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("lapsed credit: %v, want ErrInvalidKey", err)
	}
}

// The amount is bounded (500 to 10,000 cents by default); a purchase is not paid until
// the provider says so.
func TestPurchaseBoundsAndPending(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, amount := range []int64{0, 499, 10_001} {
		_, err := f.credit.Shop.Open(ctx, Purchase{Amount: amount, Email: "a@example.com", EmailVerify: "a@example.com"})
		var ie *orders.InputError
		if !errors.As(err, &ie) || ie.Code != "invalid_amount" {
			t.Errorf("amount %d: %v, want invalid_amount", amount, err)
		}
	}
	if _, err := f.credit.Shop.Open(ctx, Purchase{Amount: 500, Email: "a@example.com", EmailVerify: "b@example.com"}); err == nil {
		t.Error("two different addresses accepted")
	}
	co, err := f.credit.Shop.Open(ctx, Purchase{Amount: 10_000, Email: "a@example.com", EmailVerify: "a@example.com", Locale: "ar"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := f.credit.Shop.Result(ctx, co.SessionID); err != nil || !r.Pending {
		t.Errorf("unpaid: %+v, %v", r, err)
	}
	// Paid, and the webhook not yet come: the page's lookup asks the provider (once its
	// last question is askEvery old).
	if _, err := f.pay.Pay(ctx, co.SessionID); err != nil {
		t.Fatal(err)
	}
	f.clock.advance(askEvery)
	if r, err := f.credit.Shop.Result(ctx, co.SessionID); err != nil || !r.Full || r.Balance != 10_000_000 {
		t.Errorf("paid: %+v, %v", r, err)
	}
	if _, err := f.credit.Shop.Result(ctx, "cs_test_unknown"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

// A revoked key is refused at once; an unused key is refunded whole through the provider,
// a partly spent one is not (whole payments only).
func TestRevokeAndRefund(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	secret, k := f.buy(500)
	if err := f.credit.Keyring.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.credit.Ledger.Authenticate(ctx, secret); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("revoked key: %v", err)
	}
	if err := f.credit.Keyring.Revoke(ctx, k.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("revoking twice: %v", err)
	}
	if err := f.credit.Keyring.Refund(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.pay.RefundedIntent(ctx, k.PaymentIntent); !ok || err != nil {
		t.Errorf("the payment was not refunded: %v", err)
	}
	if err := f.credit.Keyring.Refund(ctx, k.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("refunding twice: %v", err)
	}
	f.clock.advance(time.Second) // newest first
	spentSecret, spent := f.buy(500)
	h, _ := f.credit.Ledger.Hold(ctx, spent.ID, Call{Model: "tts-1", Units: 1, Amount: 11880}) // 11.88 cents
	held, _ := f.credit.Ledger.Hold(ctx, spent.ID, Call{Model: "tts-1", Units: 1, Amount: 1000})
	if err := f.credit.Keyring.Refund(ctx, spent.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("refunding credit a running call holds: %v", err)
	}
	f.credit.Ledger.Settle(ctx, h)
	f.credit.Ledger.Release(ctx, held)
	// 500 cents less 11.88: 488 whole cents go back, the 0.12 stays on the ended key.
	if err := f.credit.Keyring.Refund(ctx, spent.ID); err != nil {
		t.Fatalf("refunding the unused balance: %v", err)
	}
	refunds, _ := f.pay.Refunds(ctx)
	if len(refunds) != 2 || refunds[1].PaymentIntent != spent.PaymentIntent || refunds[1].Amount != 488 {
		t.Errorf("refunds %+v, want the unused 488 cents of the spent key's payment", refunds)
	}
	if _, err := f.credit.Ledger.Authenticate(ctx, spentSecret); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("a refunded key: %v", err)
	}
	keys, err := f.credit.Keyring.List(ctx, 10)
	if err != nil || len(keys) != 2 || keys[0].ID != spent.ID || keys[1].Status != StatusRefunded {
		t.Errorf("listed %+v, %v", keys, err)
	}
}

// The letter's claim is taken on the row before the send: a second sender (the webhook and
// the page's lookup at once, another node) finds it taken and sends nothing, even while
// the key is still sealed.
func TestLetterClaimSendsOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	co, err := f.credit.Shop.Open(ctx, Purchase{Amount: 500, Email: "dev@example.com", EmailVerify: "dev@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	f.pay.Pay(ctx, co.SessionID)
	session, _ := f.pay.GetCheckout(ctx, co.SessionID)
	if _, err := f.credit.Shop.HandleEvent(ctx, orders.PaymentEvent{ID: "evt_1", Type: stripe.EventCheckoutCompleted, Session: session}); err != nil {
		t.Fatal(err)
	}
	k, err := f.credit.Shop.keys.one(ctx, "session_id", co.SessionID)
	if err != nil || k.sealed == "" || k.MailState != "sent" {
		t.Fatalf("after the payment: %+v, %v; want the key mailed and still sealed (not shown yet)", k, err)
	}
	f.credit.Shop.sendLetter(ctx, k)
	if n := f.sent.n.Load(); n != 1 {
		t.Errorf("%d letters sent, want 1", n)
	}
}

// refundFault refunds through the test checkout, then answers as a provider whose answer
// was lost (a timeout: the money is back, the caller cannot know), or refuses outright.
type refundFault struct {
	*stripe.TestCheckout
	refuse bool
}

func (p refundFault) Refund(ctx context.Context, intent, idem string) error {
	if p.refuse {
		return fmt.Errorf("%w: declined", providers.ErrNotRefunded)
	}
	if err := p.TestCheckout.Refund(ctx, intent, idem); err != nil {
		return err
	}
	return errors.New("reading the provider's answer: context deadline exceeded")
}

// A key's refund whose answer was lost leaves the key ended, never spendable again (the
// money may be back); one the provider refused gives the key back as it was.
func TestAKeyRefundOfUnknownFateLeavesTheKeyEnded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	secret, k := f.buy(500)
	f.credit.Keyring.payments = refundFault{TestCheckout: f.pay}
	if err := f.credit.Keyring.Refund(ctx, k.ID); err == nil {
		t.Fatal("a refund whose answer was lost reported no error")
	}
	if _, err := f.credit.Ledger.Authenticate(ctx, secret); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("the key after a refund of unknown fate: %v; want it ended", err)
	}
	f.clock.advance(time.Second)
	secret, k = f.buy(500)
	f.credit.Keyring.payments = refundFault{TestCheckout: f.pay, refuse: true}
	if err := f.credit.Keyring.Refund(ctx, k.ID); !errors.Is(err, providers.ErrNotRefunded) {
		t.Fatalf("a refused refund: %v", err)
	}
	if got, err := f.credit.Ledger.Authenticate(ctx, secret); err != nil || got.Balance != 500_000 {
		t.Errorf("the key after a refused refund: %+v %v; want it active with its 500 cents", got, err)
	}
}
