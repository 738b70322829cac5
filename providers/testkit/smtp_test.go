package testkit

import (
	"net"
	"net/smtp"
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

// The server's faults, as a client sees them: a refusal stores nothing; a late answer and
// a hang-up store the message although the client sees an error; OnHello runs once.
func TestSMTPFaults(t *testing.T) {
	s := StartSMTP(t)
	var hellos atomic.Int32
	s.SetFault(SMTPFault{Refuse: 1, OnHello: func() { hellos.Add(1) }})
	if err := sendWithin(s, 5*time.Second); err == nil || !strings.Contains(err.Error(), "451") {
		t.Errorf("refused: %v, want a 451", err)
	}
	if err := sendWithin(s, 5*time.Second); err != nil || len(s.Messages()) != 1 || hellos.Load() != 1 {
		t.Errorf("after the refusal: %v, %d stored, %d hellos; want sent, 1, 1", err, len(s.Messages()), hellos.Load())
	}
	s.SetFault(SMTPFault{AnswerLate: 2 * time.Second})
	if err := sendWithin(s, 500*time.Millisecond); err == nil || len(s.Messages()) != 2 {
		t.Errorf("answered late: %v with %d stored, want a timeout with 2", err, len(s.Messages()))
	}
	s.SetFault(SMTPFault{HangUp: true})
	if err := sendWithin(s, 5*time.Second); err == nil || len(s.Messages()) != 3 {
		t.Errorf("hung up: %v with %d stored, want an error with 3", err, len(s.Messages()))
	}
}
