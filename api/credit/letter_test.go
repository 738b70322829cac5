package credit

import (
	"context"
	"testing"
	"time"

	"parla/api/orders"
	"parla/providers"
	"parla/providers/mail"
	"parla/providers/stripe"
	"parla/providers/testkit"
)

// paid opens a purchase, pays it and tells the shop as the webhook does (which sends the
// key's letter through the shop's mailer); the key is not shown yet.
func (f *fixture) paid() Key {
	f.t.Helper()
	ctx := context.Background()
	co, err := f.credit.Shop.Open(ctx, Purchase{Amount: 500, Email: "dev@example.com", EmailVerify: "dev@example.com"})
	if err != nil {
		f.t.Fatal(err)
	}
	f.pay.Pay(ctx, co.SessionID)
	session, _ := f.pay.GetCheckout(ctx, co.SessionID)
	if _, err := f.credit.Shop.HandleEvent(ctx, orders.PaymentEvent{ID: "evt_" + co.SessionID,
		Type: stripe.EventCheckoutCompleted, Session: session}); err != nil {
		f.t.Fatal(err)
	}
	return f.key(co.SessionID)
}

func (f *fixture) key(sessionID string) Key {
	f.t.Helper()
	k, err := f.credit.Shop.keys.one(context.Background(), "session_id", sessionID)
	if err != nil {
		f.t.Fatal(err)
	}
	return k
}

// smtp makes the shop mail through a test SMTP server.
func (f *fixture) smtp() *testkit.SMTPServer {
	f.t.Helper()
	srv := testkit.StartSMTP(f.t)
	cfg, err := mail.ParseSMTPURL(srv.URL())
	if err != nil {
		f.t.Fatal(err)
	}
	sender, err := mail.NewSMTP(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	f.credit.Shop.mailer = sender
	return srv
}

// A key's letter that the mail server refused for now (451 at the end of the data: certainly
// not sent) gives its claim back and keeps the key sealed: the reconciler sends it again
// once its pause is over, and only then; one refused five times is given up (failed) and
// its key erased once shown. One refused for good (554) keeps its claim, is recorded
// refused for the operator and never sent again. Before, any failure kept the claim for
// good: a key paid for was never mailed after a 451.
func TestAKeyLetterNotSentIsSentAgainAndARefusalIsRecorded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	srv := f.smtp()

	srv.Script(testkit.SMTPTryLaterAfterData)
	k := f.paid()
	if k.MailState != mailRetry || k.mailClaimed || k.sealed == "" || len(srv.Messages()) != 0 {
		t.Fatalf("after a 451: state %q, claimed %v, sealed %v, %d messages; want retry, the claim given back, sealed",
			k.MailState, k.mailClaimed, k.sealed != "", len(srv.Messages()))
	}
	f.credit.Shop.Result(ctx, k.SessionID) // shown meanwhile: the key stays sealed for its letter
	if n, err := f.credit.Shop.Reconcile(ctx); n != 0 || err != nil || !f.sealedKept(k.ID) {
		t.Errorf("before the pause is over: %d sent, %v, sealed %v; want none sent, the key sealed", n, err, f.sealedKept(k.ID))
	}
	f.clock.advance(letterPause)
	if n, err := f.credit.Shop.Reconcile(ctx); n != 1 || err != nil {
		t.Fatalf("once the pause is over: %d sent, %v; want the letter", n, err)
	}
	if k = f.key(k.SessionID); k.MailState != mailSent || len(srv.Messages()) != 1 || f.sealedKept(k.ID) {
		t.Errorf("sent again: state %q, %d messages, sealed %v; want sent once, the key erased", k.MailState, len(srv.Messages()), f.sealedKept(k.ID))
	}

	// Refused for now at every try: given up after letterTries, never kept sealed for good.
	refusals := make([]testkit.SMTPFault, letterTries)
	for i := range refusals {
		refusals[i] = testkit.SMTPTryLaterAfterData
	}
	srv.Script(refusals...)
	k = f.paid()
	f.credit.Shop.Result(ctx, k.SessionID)
	for range 10 {
		f.clock.advance(time.Hour)
		f.credit.Shop.Reconcile(ctx)
	}
	if k = f.key(k.SessionID); k.MailState != mailFailed || k.mailTries != letterTries || f.sealedKept(k.ID) || len(srv.Messages()) != 1 {
		t.Errorf("refused at every try: state %q after %d tries, sealed %v, %d messages; want failed after %d, erased",
			k.MailState, k.mailTries, f.sealedKept(k.ID), len(srv.Messages()), letterTries)
	}

	// Refused for good: recorded, the claim kept, never sent again.
	srv.Script(testkit.SMTPRejectAfterData)
	k = f.paid()
	f.clock.advance(time.Hour)
	f.credit.Shop.Reconcile(ctx)
	f.credit.Shop.Result(ctx, k.SessionID)
	if k = f.key(k.SessionID); k.MailState != mailRefused || !k.mailClaimed || k.mailTries != 1 || len(srv.Messages()) != 1 {
		t.Errorf("refused for good: state %q, claimed %v, %d tries, %d messages; want refused, claimed, one try",
			k.MailState, k.mailClaimed, k.mailTries, len(srv.Messages()))
	}
}

// The sealed key never outlives its need for good: a letter whose claim was taken and whose
// send was never recorded (its node died in it) leaves the key sealed until the claim is
// older than letterTimeout, then the reconciler erases it, sending nothing again; a key
// never shown is erased keepUnshown after its payment, and the page then shows it masked.
// Before, both stayed sealed for ever.
func TestSealedKeysAreErasedWithinBounds(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	k := f.paid()
	// The state a node that died between the send and its record leaves.
	if _, err := f.db.ExecContext(ctx, `UPDATE credit_keys SET mail_state = 'sending' WHERE id = ?`, k.ID); err != nil {
		t.Fatal(err)
	}
	if r, err := f.credit.Shop.Result(ctx, k.SessionID); err != nil || !r.Full {
		t.Fatalf("first result: %+v, %v", r, err)
	}
	f.credit.Shop.Reconcile(ctx)
	if !f.sealedKept(k.ID) {
		t.Error("erased while its letter's claim is younger than its timeout")
	}
	f.clock.advance(letterTimeout + time.Second)
	f.credit.Shop.Reconcile(ctx)
	if f.sealedKept(k.ID) || f.sent.n.Load() != 1 {
		t.Errorf("a claim older than its timeout: sealed %v, %d sends; want erased, sent once", f.sealedKept(k.ID), f.sent.n.Load())
	}

	unshown := f.paid()
	f.clock.advance(keepUnshown - time.Minute)
	f.credit.Shop.Reconcile(ctx)
	if !f.sealedKept(unshown.ID) {
		t.Error("a key not shown erased before keepUnshown")
	}
	f.clock.advance(time.Minute)
	f.credit.Shop.Reconcile(ctx)
	if f.sealedKept(unshown.ID) {
		t.Error("a key not shown still sealed keepUnshown after its payment")
	}
	if r, err := f.credit.Shop.Result(ctx, unshown.SessionID); err != nil || r.Full || r.Key != unshown.Masked() {
		t.Errorf("the page after the key was erased: %+v, %v; want it masked", r, err)
	}
}

func (f *fixture) sealedKept(id string) bool { return !f.sealedGone(id) }

// countingCheckout counts the provider's lookups of sessions.
type countingCheckout struct {
	*stripe.TestCheckout
	gets int
}

func (c *countingCheckout) GetCheckout(ctx context.Context, id string) (providers.CheckoutSession, error) {
	c.gets++
	return c.TestCheckout.GetCheckout(ctx, id)
}

// The page polls an unpaid session every 1.5 s: the provider is asked at most once every
// askEvery for it, and never once the row says it is paid. Before, every poll asked.
func TestTheConfirmationPageAsksTheProviderOnceEveryFewSeconds(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	counting := &countingCheckout{TestCheckout: f.pay}
	f.credit.Shop.payments = counting
	co, err := f.credit.Shop.Open(ctx, Purchase{Amount: 500, Email: "dev@example.com", EmailVerify: "dev@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if r, err := f.credit.Shop.Result(ctx, co.SessionID); err != nil || !r.Pending {
			t.Fatalf("unpaid: %+v, %v", r, err)
		}
		f.clock.advance(1500 * time.Millisecond)
	}
	if counting.gets != 1 {
		t.Errorf("three polls within %s asked the provider %d times, want once", askEvery, counting.gets)
	}
	f.pay.Pay(ctx, co.SessionID)
	f.clock.advance(askEvery)
	if r, err := f.credit.Shop.Result(ctx, co.SessionID); err != nil || !r.Full {
		t.Fatalf("paid: %+v, %v", r, err)
	}
	for range 3 {
		f.credit.Shop.Result(ctx, co.SessionID)
	}
	if counting.gets != 2 {
		t.Errorf("the provider asked %d times, want twice: once more when due, never once paid", counting.gets)
	}
}
