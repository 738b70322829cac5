package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"

	"parla/providers"
)

// SMTP sends messages through an SMTP server, one connection per message.
type SMTP struct {
	cfg  SMTPConfig
	from *netmail.Address
	addr string
}

var _ providers.Mailer = (*SMTP)(nil)

// NewSMTP checks cfg, fills its defaults and returns a sender. It does not connect.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	from, err := parseFrom(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp config: from: %w", err)
	}
	s := &SMTP{cfg: cfg, from: from, addr: net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))}
	// Build a client once so option errors surface at boot, not on the first order.
	if _, err := s.client(context.Background()); err != nil {
		return nil, fmt.Errorf("smtp config: %w", err)
	}
	return s, nil
}

// Config returns the effective configuration (defaults filled in).
func (s *SMTP) Config() SMTPConfig { return s.cfg }

// Send delivers m, or returns an error without sending when its headers are unsafe
// (ErrBadHeader, ErrBadAddress). Cancelling ctx aborts the connection at any stage. An
// error wraps providers.ErrNotSent when the message certainly did not leave: a failure
// before its data (see beforeData), or a reply that refused it, before or at the end of
// the data (RFC 5321: only a 2xx reply to the end of the data takes the message), which
// the error names too (ErrRefusedTemporary, ErrRefusedPermanent). No reply at all during
// or after the data (a timeout, a hang-up) leaves the fate unknown, and once the server
// has confirmed the data a failing RSET or QUIT is no error.
func (s *SMTP) Send(ctx context.Context, m providers.Message) error {
	msg, err := newMsg(s.from, m, time.Now())
	if err != nil {
		return fmt.Errorf("smtp: %w (%w)", err, providers.ErrNotSent)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("smtp: %w (%w)", err, providers.ErrNotSent)
	}
	// A private context whose end closes the connection: go-mail only watches ctx while
	// dialling, and the connection must not outlive this call.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, err := s.client(ctx)
	if err != nil {
		return fmt.Errorf("smtp %s: %w (%w)", s.addr, err, providers.ErrNotSent)
	}
	if err := deliver(ctx, c, msg); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return fmt.Errorf("smtp %s: %w", s.addr, redacted{err: err, addr: msg.GetToString()[0]})
	}
	return nil
}

// deliver connects (greeting, EHLO, STARTTLS, AUTH) and sends msg, go-mail's steps one by
// one so that the error tells whether the data may have left: one before it wraps
// providers.ErrNotSent.
func deliver(ctx context.Context, c *gomail.Client, msg *gomail.Msg) error {
	client, err := c.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return fmt.Errorf("dial failed: %w (%w)", err, providers.ErrNotSent)
	}
	err = c.SendWithSMTPClient(client, msg)
	_ = c.CloseWithSMTPClient(client) // QUIT; the connection closes with ctx anyway
	if msg.IsDelivered() {
		return nil // the server confirmed the data; what failed after (RSET, QUIT) changes nothing
	}
	if refusal := refused(err); refusal != nil {
		return fmt.Errorf("send failed: %w (%w, %w)", err, refusal, providers.ErrNotSent)
	}
	if beforeData(err) {
		return fmt.Errorf("send failed: %w (%w)", err, providers.ErrNotSent)
	}
	return fmt.Errorf("send failed, the message may have left: %w", err)
}

// ErrRefusedTemporary is wrapped (with providers.ErrNotSent) by a send the server refused
// for now with a 4xx reply to the message's transaction (MAIL FROM, RCPT TO, DATA or the
// end of the data): certainly not sent, and worth sending again later.
var ErrRefusedTemporary = errors.New("refused for now by the mail server")

// ErrRefusedPermanent is wrapped (with providers.ErrNotSent) by a send the server refused
// for good with a 5xx reply to the message's transaction: certainly not sent, and the same
// message would be refused again (the operator is told).
var ErrRefusedPermanent = errors.New("refused for good by the mail server")

// refused classifies a go-mail send error that is a reply of the server to the message's
// transaction: ErrRefusedTemporary for 4xx, ErrRefusedPermanent for 5xx, nil for anything
// else (no reply: a timeout, a hang-up, a closed connection; or a failure of ours).
func refused(err error) error {
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Reason {
	case gomail.ErrSMTPMailFrom, gomail.ErrSMTPRcptTo, gomail.ErrSMTPData, gomail.ErrSMTPDataClose:
	default:
		return nil
	}
	switch se.ErrorCode() / 100 {
	case 4:
		return ErrRefusedTemporary
	case 5:
		return ErrRefusedPermanent
	}
	return nil
}

// beforeData tells whether a go-mail send error came before the message's data was
// written: the connection check, MAIL FROM, RCPT TO, or the DATA command itself refused
// (the server never saw a byte of the message, so it cannot deliver it). Writing the
// data and its closing dot are after: without a reply that refused it (refused), the
// fate is unknown.
func beforeData(err error) bool {
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Reason {
	case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrSMTPMailFrom, gomail.ErrSMTPRcptTo,
		gomail.ErrSMTPData, gomail.ErrConnCheck, gomail.ErrNoUnencoded:
		return true
	}
	return false
}

// client builds a go-mail client for one send. A fresh client per message keeps concurrent
// sends apart (go-mail's Client mutates its auth state while dialling).
func (s *SMTP) client(ctx context.Context) (*gomail.Client, error) {
	tlsConfig := &tls.Config{
		ServerName:         s.cfg.Host,
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: s.cfg.InsecureSkipVerify, //nolint:gosec // opt-in for development servers
	}
	opts := []gomail.Option{
		gomail.WithPort(s.cfg.Port),
		gomail.WithTimeout(s.cfg.Timeout),
		gomail.WithTLSConfig(tlsConfig),
		gomail.WithDialContextFunc(s.dialer(ctx, tlsConfig)),
	}
	switch s.cfg.TLS {
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSRequired:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.cfg.Username != "" {
		// Strongest mechanism the server offers. PLAIN and LOGIN are refused by go-mail on an
		// unencrypted connection to anything but localhost, so a password never crosses the
		// network in clear.
		opts = append(opts,
			gomail.WithUsername(s.cfg.Username),
			gomail.WithPassword(s.cfg.Password),
			gomail.WithOpportunisticSMTPAuth(
				gomail.SMTPAuthSCRAMSHA256PLUS, gomail.SMTPAuthSCRAMSHA256,
				gomail.SMTPAuthSCRAMSHA1PLUS, gomail.SMTPAuthSCRAMSHA1,
				gomail.SMTPAuthCramMD5, gomail.SMTPAuthPlain, gomail.SMTPAuthLogin,
			),
		)
	}
	return gomail.NewClient(s.cfg.Host, opts...)
}

// dialer connects (with TLS for smtps) and ties the connection's life to ctx.
func (s *SMTP) dialer(ctx context.Context, tlsConfig *tls.Config) gomail.DialContextFunc {
	return func(dialCtx context.Context, network, address string) (net.Conn, error) {
		nd := &net.Dialer{Timeout: s.cfg.Timeout}
		var (
			conn net.Conn
			err  error
		)
		if s.cfg.TLS == TLSImplicit {
			conn, err = (&tls.Dialer{NetDialer: nd, Config: tlsConfig}).DialContext(dialCtx, network, address)
		} else {
			conn, err = nd.DialContext(dialCtx, network, address)
		}
		if err != nil {
			return nil, err
		}
		// Returned unwrapped: go-mail looks for *tls.Conn to know the session is encrypted.
		context.AfterFunc(ctx, func() { conn.Close() })
		return conn, nil
	}
}
