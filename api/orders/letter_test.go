package orders

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"parla/providers/mail"
	"parla/providers/testkit"
)

// newSMTPFixture is newFixture whose letters go to a real SMTP server, which the test
// scripts to misbehave (testkit.SMTPFault).
func newSMTPFixture(t *testing.T, edit func(*Config)) (*fixture, *testkit.SMTPServer) {
	t.Helper()
	srv := testkit.StartSMTP(t)
	cfg, err := mail.ParseSMTPURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 30 * time.Second // only the job's own timeout cuts a late answer short
	sender, err := mail.NewSMTP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureDeps(t, edit, func(d *Deps) { d.Mailer = sender }), srv
}

// Letters at most once (issue 37, hole 2): a letter whose data reached the SMTP server but
// whose answer never came (the server hung up after the data, or answered after the job's
// timeout) may be in the visitor's box, so it is never sent again: the order ends with one
// letter, and the operator is told which order's letter is in doubt. A letter that
// certainly did not leave (the recipient refused for now, or the end of its data answered
// 451: issue 44) is sent again, once; one the server refused for good (554) is not, and the
// operator's list shows it. The same holds for the news of a refund.
func TestLetterIsSentAtMostOnce(t *testing.T) {
	for _, tt := range []struct {
		name     string
		fault    testkit.SMTPFault
		refund   bool // the engine fails: the letter is the refund's news
		timeout  time.Duration
		doubt    bool // the send's fate is unknown
		rejected bool // refused for good: no letter, the order in the operator's list
	}{
		{name: "hung up after the data", fault: testkit.SMTPHangUpAfterData, doubt: true},
		{name: "answered after the job's timeout", fault: testkit.SMTPAnswerLate, timeout: 3 * time.Second, doubt: true},
		{name: "recipient refused for now", fault: testkit.SMTPRefuseRcpt},
		{name: "end of the data refused for now", fault: testkit.SMTPTryLaterAfterData},
		{name: "end of the data refused for good", fault: testkit.SMTPRejectAfterData, rejected: true},
		{name: "refund: hung up after the data", fault: testkit.SMTPHangUpAfterData, refund: true, doubt: true},
		{name: "refund: recipient refused for now", fault: testkit.SMTPRefuseRcpt, refund: true},
		{name: "refund: end of the data refused for now", fault: testkit.SMTPTryLaterAfterData, refund: true},
		{name: "refund: end of the data refused for good", fault: testkit.SMTPRejectAfterData, refund: true, rejected: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newSMTPFixture(t, func(c *Config) { c.JobTimeout = tt.timeout })
			srv.Script(tt.fault)
			want := Done
			if tt.refund {
				f.speaker.failures.Store(-1)
				want = Refunded
			}
			co := f.order(t, "One letter, whatever the server does.")
			f.pay(t, co.SessionID)
			f.waitStatus(t, co.OrderID, want)
			// Nor does the reconciler send one in doubt, or refused for good, again.
			f.clock.Advance(letterRetryAfter + time.Second)
			if n, err := f.book.fulfil.resendLetters(context.Background()); n != 0 || err != nil {
				t.Errorf("the reconciler sent %d letters (%v), want none", n, err)
			}
			// The order's last run has ended: a second letter would be there by now.
			letters := 1
			if tt.rejected {
				letters = 0
			}
			if got := srv.Messages(); len(got) != letters {
				t.Errorf("%d letters reached the server, want %d", len(got), letters)
			}
			if listed := f.unmailed(t, co.OrderID); listed != (tt.doubt || tt.rejected) {
				t.Errorf("order in the operator's unmailed list: %v, want %v", listed, !listed)
			}
			logs := f.logs.String()
			inDoubt := strings.Contains(logs, "level=ERROR") && strings.Contains(logs, "may have been sent") && strings.Contains(logs, co.OrderID)
			if inDoubt != tt.doubt {
				t.Errorf("letter logged as in doubt: %v, want %v", inDoubt, tt.doubt)
			}
		})
	}
}

// unmailed tells whether the operator's list of orders whose letter is not known sent
// holds the order.
func (f *fixture) unmailed(t *testing.T, id string) bool {
	t.Helper()
	list, err := f.book.Operator().Search(context.Background(), Search{Filter: FilterUnmailed})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(list, func(o Order) bool { return o.ID == id })
}

// A letter the mail server refuses for now on every try of its run (451 at the end of its
// data) ends its order without it (done, the link on the confirmation page; refunded, the
// money back), and is sent again once its order ended: after letterRetryAfter, claim
// first, once (issue 44: "a done order always ends with its letter sent or in the
// operator's list"). The same for the news of a refund.
func TestARefusedLetterIsSentAgainAfterItsOrderEnded(t *testing.T) {
	for _, refund := range []bool{false, true} {
		t.Run(fmt.Sprintf("refund=%v", refund), func(t *testing.T) {
			f, srv := newSMTPFixture(t, nil)
			want := Done
			if refund {
				f.speaker.failures.Store(-1)
				want = Refunded
			}
			refusals := make([]testkit.SMTPFault, 10) // more than the run's tries
			for i := range refusals {
				refusals[i] = testkit.SMTPTryLaterAfterData
			}
			srv.Script(refusals...)
			co := f.order(t, "Its letter refused for now.")
			f.pay(t, co.SessionID)
			f.waitStatus(t, co.OrderID, want)
			if n := len(srv.Messages()); n != 0 || !f.unmailed(t, co.OrderID) {
				t.Fatalf("%d letters, in the operator's list %v; want none yet, listed", n, f.unmailed(t, co.OrderID))
			}
			srv.Calm()
			ctx := context.Background()
			resend := f.book.fulfil.resendLetters
			if n, err := resend(ctx); n != 0 || err != nil {
				t.Fatalf("resent %d (%v) before letterRetryAfter, want none", n, err)
			}
			f.clock.Advance(letterRetryAfter + time.Second)
			if n, err := resend(ctx); n != 1 || err != nil {
				t.Fatalf("resent %d (%v), want 1", n, err)
			}
			f.clock.Advance(letterRetryAfter + time.Second)
			if n, err := resend(ctx); n != 0 || err != nil {
				t.Fatalf("resent %d (%v) once sent, want none", n, err)
			}
			if n := len(srv.Messages()); n != 1 || f.unmailed(t, co.OrderID) {
				t.Errorf("%d letters, in the operator's list %v; want 1, not listed", n, f.unmailed(t, co.OrderID))
			}
			if o, _ := f.book.Desk.orders.Get(ctx, co.OrderID); o.Status != want || o.Email != "" || o.MailedAt.IsZero() {
				t.Errorf("order %s, address kept %v, mailed %v; want %s, erased, mailed", o.Status, o.Email != "", o.MailedAt, want)
			}
		})
	}
}

// A letter the mail server refused for good stays in the operator's list until the
// operator's Resend sends it; the order then leaves the list and its address goes. A
// refunded order's news too (Resend sends the refund's letter): before, Resend took
// delivered orders only, and a refunded one stayed listed with no remedy.
func TestTheOperatorsResendTakesARejectedLetterOffTheList(t *testing.T) {
	for _, want := range []Status{Done, Refunded} {
		f, srv := newSMTPFixture(t, nil)
		srv.Script(testkit.SMTPRejectAfterData)
		if want == Refunded {
			f.speaker.failures.Store(-1)
		}
		co := f.order(t, "Its letter refused for good.")
		f.pay(t, co.SessionID)
		f.waitStatus(t, co.OrderID, want)
		if !f.unmailed(t, co.OrderID) {
			t.Fatalf("a %s order whose letter was refused for good is not in the operator's list", want)
		}
		by := Actor{Who: "password", IP: "192.0.2.1", Once: "form-1"}
		if out, err := f.book.Operator().Resend(context.Background(), by, co.OrderID, ""); err != nil || !strings.HasPrefix(out.Result, "ok:") {
			t.Fatalf("%s: resend: %+v %v", want, out, err)
		}
		if n := len(srv.Messages()); n != 1 || f.unmailed(t, co.OrderID) {
			t.Errorf("%s: %d letters, in the operator's list %v; want 1, not listed", want, n, f.unmailed(t, co.OrderID))
		}
		if o, _ := f.book.Desk.orders.Get(context.Background(), co.OrderID); o.Email != "" {
			t.Errorf("%s: the address is kept after the letter was sent", want)
		}
	}
}

// A letter that never left (refused for good, never resent) does not keep its address past
// the link: when the link lapses the order ends expired, its address erased, and it leaves
// the operator's list, the delivery letter having nothing left to deliver.
func TestALapsedLinkErasesTheAddressOfALetterThatNeverLeft(t *testing.T) {
	f, srv := newSMTPFixture(t, nil)
	srv.Script(testkit.SMTPRejectAfterData)
	co := f.order(t, "Refused for good, then lapsed.")
	f.pay(t, co.SessionID)
	if o := f.waitStatus(t, co.OrderID, Done); o.Email == "" {
		t.Fatal("the address went before the letter")
	}
	f.clock.Advance(f.book.cfg.LinkTTL + time.Hour)
	if _, err := f.book.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	o, _ := f.book.Desk.orders.Get(context.Background(), co.OrderID)
	if o.Status != Expired || o.Email != "" || f.unmailed(t, co.OrderID) {
		t.Errorf("after the link lapsed: %s, address kept %v, listed %v; want expired, erased, not listed",
			o.Status, o.Email != "", f.unmailed(t, co.OrderID))
	}
}
