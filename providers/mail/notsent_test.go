package mail_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/mail"
	"parla/providers/testkit"
)

// A send error says whether the message certainly did not leave (providers.ErrNotSent:
// the order book may send it again) or may have (never sent again: two letters otherwise).
// The real SMTP server refuses or misbehaves at each stage; what it received is the truth.
func TestSMTPErrorTellsWhetherTheMessageLeft(t *testing.T) {
	letter := providers.Message{ID: "parla.ord_1.delivered", To: "visitor@example.com", Subject: "Your audio", Text: "t", HTML: "<p>h</p>"}
	closedPort := func() string { // a port nobody listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	tests := []struct {
		name     string
		fault    testkit.SMTPFault
		edit     func(*mail.SMTPConfig)
		msg      func(providers.Message) providers.Message
		cancel   bool  // cancel the send's context once the server holds the message
		notSent  bool  // the error wraps ErrNotSent
		refusal  error // the refusal the error names (nil: none)
		received int   // messages the server holds afterwards
	}{
		{name: "connection refused", edit: func(c *mail.SMTPConfig) {
			host, port, _ := net.SplitHostPort(closedPort())
			c.Host = host
			c.Port, _ = strconv.Atoi(port)
		}, notSent: true},
		{name: "authentication refused", edit: func(c *mail.SMTPConfig) { c.Password = "wrong" }, notSent: true},
		{name: "STARTTLS required, not offered", edit: func(c *mail.SMTPConfig) { c.TLS = mail.TLSRequired }, notSent: true},
		{name: "recipient refused", fault: testkit.SMTPRefuseRcpt, notSent: true, refusal: mail.ErrRefusedTemporary},
		// RFC 5321: only a 2xx reply to the end of the data takes the message.
		{name: "end of the data refused for now (451)", fault: testkit.SMTPTryLaterAfterData, notSent: true, refusal: mail.ErrRefusedTemporary},
		{name: "end of the data refused for good (554)", fault: testkit.SMTPRejectAfterData, notSent: true, refusal: mail.ErrRefusedPermanent},
		{name: "unsafe header", msg: func(m providers.Message) providers.Message { m.Subject = "a\r\nBcc: x@example.net"; return m }, notSent: true},
		{name: "hung up after the data", fault: testkit.SMTPHangUpAfterData, received: 1},
		{name: "answer late, context ended meanwhile", fault: testkit.SMTPAnswerLate, cancel: true, received: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.StartSMTP(t)
			srv.Script(tt.fault)
			sender := newSMTP(t, srv.URL(), func(c *mail.SMTPConfig) {
				if tt.edit != nil {
					tt.edit(c)
				}
			})
			m := letter
			if tt.msg != nil {
				m = tt.msg(m)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				go func() {
					srv.WaitForMessages(t, 1, 10*time.Second)
					cancel()
				}()
			}
			err := sender.Send(ctx, m)
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if got := errors.Is(err, providers.ErrNotSent); got != tt.notSent {
				t.Errorf("errors.Is(%v, ErrNotSent) = %v, want %v", err, got, tt.notSent)
			}
			for _, refusal := range []error{mail.ErrRefusedTemporary, mail.ErrRefusedPermanent} {
				if got := errors.Is(err, refusal); got != (refusal == tt.refusal) {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", err, refusal, got, !got)
				}
			}
			if tt.cancel && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v does not say the context ended", err)
			}
			if strings.Contains(err.Error(), m.To) {
				t.Errorf("error %q repeats the address", err)
			}
			if n := len(srv.Messages()); n != tt.received {
				t.Errorf("server holds %d message(s), want %d", n, tt.received)
			}
		})
	}
}

// After a refused transaction the server is served normally: the refusal was the fault.
func TestSMTPSendsAfterARefusedRecipient(t *testing.T) {
	srv := testkit.StartSMTP(t)
	srv.Script(testkit.SMTPRefuseRcpt)
	sender := newSMTP(t, srv.URL(), nil)
	m := providers.Message{To: "visitor@example.com", Subject: "s", Text: "t"}
	if err := sender.Send(context.Background(), m); !errors.Is(err, providers.ErrNotSent) {
		t.Fatalf("first send: %v, want ErrNotSent", err)
	}
	if err := sender.Send(context.Background(), m); err != nil {
		t.Fatalf("second send: %v", err)
	}
	if n := len(srv.WaitForMessages(t, 1, 5*time.Second)); n != 1 {
		t.Errorf("server holds %d messages, want 1", n)
	}
}

// A message the server confirmed was sent, whatever fails after (RSET, QUIT): an error
// there would have the order book keep the letter unconfirmed, or send it twice.
func TestSMTPConfirmedThenCutOffIsSent(t *testing.T) {
	srv := testkit.StartSMTP(t)
	srv.Script(testkit.SMTPHangUpAfterAnswer)
	sender := newSMTP(t, srv.URL(), nil)
	if err := sender.Send(context.Background(), providers.Message{To: "visitor@example.com", Subject: "s", Text: "t"}); err != nil {
		t.Errorf("Send: %v, want nil (the server confirmed the data)", err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Errorf("server holds %d messages, want 1", n)
	}
}

// An outbox whose file cannot be written did not send the message.
func TestOutboxErrorIsNotSent(t *testing.T) {
	dir := t.TempDir()
	outbox, err := mail.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	err = outbox.Send(context.Background(), providers.Message{ID: "parla.ord_1.delivered", To: "visitor@example.com", Subject: "s", Text: "t"})
	if !errors.Is(err, providers.ErrNotSent) {
		t.Errorf("got %v, want an error wrapping ErrNotSent", err)
	}
}
