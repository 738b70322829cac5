package orders

import (
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
// certainly did not leave (the recipient refused for now) is sent again, once. The same
// holds for the news of a refund.
func TestLetterIsSentAtMostOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		fault   testkit.SMTPFault
		refund  bool // the engine fails: the letter is the refund's news
		timeout time.Duration
		doubt   bool // the send's fate is unknown
	}{
		{name: "hung up after the data", fault: testkit.SMTPHangUpAfterData, doubt: true},
		{name: "answered after the job's timeout", fault: testkit.SMTPAnswerLate, timeout: 3 * time.Second, doubt: true},
		{name: "recipient refused for now", fault: testkit.SMTPRefuseRcpt},
		{name: "refund: hung up after the data", fault: testkit.SMTPHangUpAfterData, refund: true, doubt: true},
		{name: "refund: recipient refused for now", fault: testkit.SMTPRefuseRcpt, refund: true},
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
			// The order's last run has ended: a second letter would be there by now.
			if got := srv.Messages(); len(got) != 1 {
				t.Errorf("%d letters reached the server, want 1", len(got))
			}
			logs := f.logs.String()
			inDoubt := strings.Contains(logs, "level=ERROR") && strings.Contains(logs, "may have been sent") && strings.Contains(logs, co.OrderID)
			if inDoubt != tt.doubt {
				t.Errorf("letter logged as in doubt: %v, want %v", inDoubt, tt.doubt)
			}
		})
	}
}
