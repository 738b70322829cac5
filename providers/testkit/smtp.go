package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Default credentials of the test SMTP server; StartSMTP requires them unless told otherwise.
const (
	SMTPUser     = "parla"
	SMTPPassword = "parla-test-password"
)

// Received is one message the test SMTP server accepted.
type Received struct {
	From string   // envelope sender (MAIL FROM)
	To   []string // envelope recipients (RCPT TO)
	Data []byte   // the message as sent after DATA, headers included
	TLS  bool     // whether the session was encrypted (STARTTLS or implicit TLS)
	User string   // the authenticated user name, empty without AUTH
}

// SMTPOption changes how StartSMTP sets up the server.
type SMTPOption func(*smtpOptions)

type smtpOptions struct {
	user, password string
	startTLS       bool
	implicitTLS    bool
	clientTimeout  time.Duration
}

// SMTPClientTimeout makes URL ask its client to wait at most d for each answer (timeout=d).
func SMTPClientTimeout(d time.Duration) SMTPOption {
	return func(o *smtpOptions) { o.clientTimeout = d }
}

// SMTPAuth requires AUTH PLAIN with the given credentials (instead of SMTPUser/SMTPPassword).
func SMTPAuth(user, password string) SMTPOption {
	return func(o *smtpOptions) { o.user, o.password = user, password }
}

// SMTPNoAuth turns AUTH off: the server accepts mail from anyone, like a mail catcher.
func SMTPNoAuth() SMTPOption {
	return func(o *smtpOptions) { o.user, o.password = "", "" }
}

// SMTPStartTLS makes the server offer STARTTLS with a self-signed certificate; URL then asks
// for starttls=required with insecure_skip_verify=1.
func SMTPStartTLS() SMTPOption {
	return func(o *smtpOptions) { o.startTLS = true }
}

// SMTPImplicitTLS makes the server speak TLS from the first byte (smtps) with a self-signed
// certificate; URL then uses the smtps scheme with insecure_skip_verify=1.
func SMTPImplicitTLS() SMTPOption {
	return func(o *smtpOptions) { o.implicitTLS = true }
}

// SMTPServer is a real SMTP server (github.com/emersion/go-smtp) listening on a loopback
// port for the duration of a test. It keeps every message it accepts.
type SMTPServer struct {
	// Addr is host:port of the listener.
	Addr string

	opts   smtpOptions
	server *smtp.Server

	mu       sync.Mutex
	messages []Received
	script   []SMTPFault   // the faults the next transactions meet, in order
	hello    func()        // called once at the next EHLO (OnHello)
	arrived  chan struct{} // gets a token (non-blocking) whenever a message is stored
	closed   chan struct{} // closed when the test ends
}

// SMTPFault is how the server mishandles one transaction (MAIL FROM to the answer to the
// data), as Script queues them.
type SMTPFault int

const (
	// SMTPRefuseRcpt answers RCPT TO with 451: the client never sends the data.
	SMTPRefuseRcpt SMTPFault = iota + 1
	// SMTPHangUpAfterData keeps the message, then closes the connection without answering
	// the data: the message has arrived, the client cannot know it.
	SMTPHangUpAfterData
	// SMTPAnswerLate keeps the message and answers the data only when the test ends: a
	// client that stops waiting cannot know the message arrived.
	SMTPAnswerLate
	// SMTPHangUpAfterAnswer keeps the message, confirms it, then closes the connection:
	// the client's RSET and QUIT fail after a delivery.
	SMTPHangUpAfterAnswer
	// SMTPTryLaterAfterData reads the message, then answers the end of its data with
	// "451 4.3.0 try again later" and drops it: refused for now, certainly not delivered.
	SMTPTryLaterAfterData
	// SMTPRejectAfterData reads the message, then answers the end of its data with
	// "554 5.6.0 message refused" and drops it: refused for good, certainly not delivered.
	SMTPRejectAfterData
)

// refusals are the answers to the end of the data that refuse the message (RFC 5321: only
// a 2xx takes it).
var refusals = map[SMTPFault]*smtp.SMTPError{
	SMTPTryLaterAfterData: {Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"},
	SMTPRejectAfterData:   {Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "Message refused"},
}

// Script makes the next transactions meet faults, one each in order; the ones after are
// served normally.
func (s *SMTPServer) Script(faults ...SMTPFault) {
	s.mu.Lock()
	s.script = append(s.script, faults...)
	s.mu.Unlock()
}

// OnHello has f called once, when the next client says EHLO (it has decided to send,
// nothing is sent yet), before the server answers: the fault suite freezes the sender there.
func (s *SMTPServer) OnHello(f func()) {
	s.mu.Lock()
	s.hello = f
	s.mu.Unlock()
}

// Calm drops the faults and the hook not met yet: the next transactions are served normally.
func (s *SMTPServer) Calm() {
	s.mu.Lock()
	s.script, s.hello = nil, nil
	s.mu.Unlock()
}

// takeHello takes the OnHello hook, if any.
func (s *SMTPServer) takeHello() func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.hello
	s.hello = nil
	return f
}

// nextFault takes the fault the transaction starting now meets (0: none).
func (s *SMTPServer) nextFault() SMTPFault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) == 0 {
		return 0
	}
	f := s.script[0]
	s.script = s.script[1:]
	return f
}

// StartSMTP starts the server on a free loopback port and closes it in t.Cleanup. By default
// it requires AUTH PLAIN as SMTPUser/SMTPPassword over plain text (AllowInsecureAuth).
func StartSMTP(t testing.TB, opts ...SMTPOption) *SMTPServer {
	t.Helper()
	o := smtpOptions{user: SMTPUser, password: SMTPPassword}
	for _, opt := range opts {
		opt(&o)
	}
	s := &SMTPServer{opts: o, arrived: make(chan struct{}, 1), closed: make(chan struct{})}

	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		if hook := s.takeHello(); hook != nil {
			hook()
		}
		return &smtpSession{server: s, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.MaxMessageBytes = 10 << 20
	srv.MaxRecipients = 10
	logger := &testLogger{t: t}
	srv.ErrorLog = logger

	var tlsConfig *tls.Config
	if o.startTLS || o.implicitTLS {
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{selfSignedCert(t)}, MinVersion: tls.VersionTLS12}
	}
	if o.startTLS {
		srv.TLSConfig = tlsConfig
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("starting test SMTP server: %v", err)
	}
	if o.implicitTLS {
		l = tls.NewListener(l, tlsConfig)
	}
	s.Addr = l.Addr().String()
	s.server = srv

	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, smtp.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			t.Errorf("test SMTP server: %v", err)
		}
	}()
	t.Cleanup(func() {
		close(s.closed)
		srv.Close()
		l.Close() // Close misses a listener that Serve has not registered yet
		<-done
		// Connection goroutines can still log after Close (go-smtp does not wait for them);
		// the test must not be touched once it has finished.
		logger.stop()
	})
	return s
}

// URL returns an SMTP_URL that reaches this server with its credentials and TLS mode.
func (s *SMTPServer) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.Addr}
	if s.opts.user != "" {
		u.User = url.UserPassword(s.opts.user, s.opts.password)
	}
	q := url.Values{}
	switch {
	case s.opts.implicitTLS:
		u.Scheme = "smtps"
		q.Set("insecure_skip_verify", "1")
	case s.opts.startTLS:
		q.Set("starttls", "required")
		q.Set("insecure_skip_verify", "1")
	default:
		q.Set("starttls", "none")
	}
	if s.opts.clientTimeout > 0 {
		q.Set("timeout", s.opts.clientTimeout.String())
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Messages returns a copy of the messages received so far, in arrival order.
func (s *SMTPServer) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Received, len(s.messages))
	copy(out, s.messages)
	return out
}

// WaitForMessages waits until at least n messages have arrived and returns them; it fails
// the test when they have not arrived within timeout.
func (s *SMTPServer) WaitForMessages(t testing.TB, n int, timeout time.Duration) []Received {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if got := s.Messages(); len(got) >= n {
			return got
		}
		select {
		case <-s.arrived:
		case <-deadline.C:
			t.Fatalf("test SMTP server: waited %s for %d message(s), got %d", timeout, n, len(s.Messages()))
			return nil
		}
	}
}

func (s *SMTPServer) store(r Received) {
	s.mu.Lock()
	s.messages = append(s.messages, r)
	s.mu.Unlock()
	select {
	case s.arrived <- struct{}{}:
	default:
	}
}

// smtpSession is one client connection's transaction state.
type smtpSession struct {
	server *SMTPServer
	conn   *smtp.Conn
	user   string
	from   string
	to     []string
	fault  SMTPFault // what this transaction meets (Script)
	kept   bool      // this transaction's message was stored
}

func (ss *smtpSession) authRequired() bool { return ss.server.opts.user != "" }

func (ss *smtpSession) AuthMechanisms() []string {
	if !ss.authRequired() {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *smtpSession) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain || !ss.authRequired() {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != ss.server.opts.user || password != ss.server.opts.password {
			return smtp.ErrAuthFailed
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if ss.authRequired() && ss.user == "" {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	ss.fault = ss.server.nextFault()
	return nil
}

func (ss *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.authRequired() && ss.user == "" {
		return smtp.ErrAuthRequired
	}
	if ss.fault == SMTPRefuseRcpt {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *smtpSession) Data(r io.Reader) error {
	if ss.authRequired() && ss.user == "" {
		return smtp.ErrAuthRequired
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("reading DATA: %w", err)
	}
	if refusal, ok := refusals[ss.fault]; ok {
		return refusal
	}
	_, isTLS := ss.conn.TLSConnectionState()
	ss.server.store(Received{
		From: ss.from,
		To:   append([]string(nil), ss.to...),
		Data: data,
		TLS:  isTLS,
		User: ss.user,
	})
	ss.kept = true
	switch ss.fault {
	case SMTPHangUpAfterData:
		ss.conn.Conn().Close()
	case SMTPAnswerLate:
		<-ss.server.closed
	}
	return nil
}

func (ss *smtpSession) Reset() {
	if ss.fault == SMTPHangUpAfterAnswer && ss.kept {
		ss.conn.Conn().Close() // called once the data's answer is written
	}
	ss.kept = false
	ss.from = ""
	ss.to = nil
	ss.fault = 0
}

func (ss *smtpSession) Logout() error { return nil }

// testLogger sends the server's error log to the test log, so a protocol problem shows up
// next to the failing test instead of on stderr, and drops it once the test is over.
type testLogger struct {
	t       testing.TB
	mu      sync.Mutex
	stopped bool
}

func (l *testLogger) Printf(format string, v ...interface{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.t.Logf("smtp server: "+format, v...)
	}
}

func (l *testLogger) Println(v ...interface{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.t.Log(append([]interface{}{"smtp server:"}, v...)...)
	}
}

func (l *testLogger) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
}

// selfSignedCert makes a throwaway certificate for 127.0.0.1 and localhost.
func selfSignedCert(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generating test TLS key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "parla test SMTP"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("creating test TLS certificate: %v", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
