package testkit

import (
	"errors"
	"net"
	"net/smtp"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sendWithin sends one message to s as a client that waits at most wait for each answer.
func sendWithin(s *SMTPServer, wait time.Duration) error {
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(wait))
	c, err := smtp.NewClient(conn, "127.0.0.1")
	if err != nil {
		return err
	}
	if err := c.Auth(smtp.PlainAuth("", SMTPUser, SMTPPassword, "127.0.0.1")); err != nil {
		return err
	}
	if err := c.Mail("a@example.com"); err != nil {
		return err
	}
	if err := c.Rcpt("b@example.com"); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	w.Write([]byte("Subject: x\r\n\r\nhello\r\n"))
	return w.Close()
}

// OnHello runs once, at the next client's EHLO, before the server answers; a client
// timeout is in the URL the nodes get.
func TestSMTPOnHelloAndClientTimeout(t *testing.T) {
	s := StartSMTP(t, SMTPClientTimeout(3*time.Second))
	var hellos atomic.Int32
	s.OnHello(func() { hellos.Add(1) })
	for range 2 {
		if err := sendWithin(s, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if n := hellos.Load(); n != 1 || len(s.Messages()) != 2 {
		t.Errorf("%d hellos for %d messages, want 1 for 2", n, len(s.Messages()))
	}
	if u := s.URL(); !strings.Contains(u, "timeout=3s") {
		t.Errorf("URL %s names no timeout", u)
	}
}

// The refusals at the end of the data answer the scripted transactions with their codes,
// keep nothing, and serve the next transaction normally.
func TestSMTPRefusesTheEndOfTheData(t *testing.T) {
	s := StartSMTP(t)
	s.Script(SMTPTryLaterAfterData, SMTPRejectAfterData)
	for _, want := range []int{451, 554} {
		var reply *textproto.Error
		if err := sendWithin(s, 5*time.Second); !errors.As(err, &reply) || reply.Code != want {
			t.Errorf("send: %v, want a %d reply", err, want)
		}
	}
	if err := sendWithin(s, 5*time.Second); err != nil {
		t.Fatalf("send after the refusals: %v", err)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("server holds %d messages, want 1 (the refused ones dropped)", n)
	}
}
