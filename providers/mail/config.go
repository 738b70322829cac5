package mail

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrBadSMTPURL is returned (wrapped) by ParseSMTPURL for a URL it cannot use. The message
// never repeats the password.
var ErrBadSMTPURL = errors.New("bad SMTP_URL")

// DefaultFrom is the sender used when the configuration names none.
const DefaultFrom = "Parla <no-reply@localhost>"

// DefaultTimeout bounds connecting and each SMTP command when the configuration names none.
const DefaultTimeout = 15 * time.Second

// TLSMode says how the connection to the SMTP server is encrypted.
type TLSMode string

const (
	// TLSOpportunistic upgrades with STARTTLS when the server offers it (smtp:// default).
	TLSOpportunistic TLSMode = "opportunistic"
	// TLSRequired refuses to send unless STARTTLS succeeds (smtp://…?starttls=required).
	TLSRequired TLSMode = "required"
	// TLSNone never encrypts (smtp://…?starttls=none); for a local mail catcher only.
	TLSNone TLSMode = "none"
	// TLSImplicit speaks TLS from the first byte (smtps://).
	TLSImplicit TLSMode = "implicit"
)

// SMTPConfig is everything NewSMTP needs; ParseSMTPURL fills it from SMTP_URL.
type SMTPConfig struct {
	Host     string
	Port     int
	Username string // empty: no AUTH
	Password string
	TLS      TLSMode // empty means TLSOpportunistic
	// InsecureSkipVerify accepts any server certificate; for development servers only.
	InsecureSkipVerify bool
	From               string        // RFC 5322 address; empty means DefaultFrom
	Timeout            time.Duration // zero means DefaultTimeout
}

// String describes the configuration without the password, for logs.
func (c SMTPConfig) String() string {
	user := ""
	if c.Username != "" {
		user = c.Username + "@"
	}
	return fmt.Sprintf("smtp %s%s tls=%s from=%q", user, net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), c.TLS, c.From)
}

// ParseSMTPURL reads an SMTP_URL of the form
//
//	smtp://user:pass@host:port?starttls=required|none|opportunistic
//	smtps://user:pass@host:port
//
// with the optional query parameters from (sender address), insecure_skip_verify (1/true,
// development only) and timeout (a Go duration such as 10s). smtp defaults to port 587 and
// opportunistic STARTTLS, smtps to port 465. User name and password are percent-decoded.
func ParseSMTPURL(s string) (SMTPConfig, error) {
	var cfg SMTPConfig
	if strings.TrimSpace(s) == "" {
		return cfg, fmt.Errorf("%w: empty", ErrBadSMTPURL)
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return cfg, fmt.Errorf("%w: %w", ErrBadSMTPURL, err)
	}
	switch u.Scheme {
	case "smtp":
		cfg.TLS, cfg.Port = TLSOpportunistic, 587
	case "smtps":
		cfg.TLS, cfg.Port = TLSImplicit, 465
	case "":
		return cfg, fmt.Errorf("%w: no scheme (want smtp:// or smtps://)", ErrBadSMTPURL)
	default:
		return cfg, fmt.Errorf("%w: scheme %q (want smtp or smtps)", ErrBadSMTPURL, u.Scheme)
	}
	if u.Opaque != "" {
		return cfg, fmt.Errorf("%w: want %s://host[:port]", ErrBadSMTPURL, u.Scheme)
	}
	if u.Path != "" && u.Path != "/" {
		return cfg, fmt.Errorf("%w: unexpected path %q", ErrBadSMTPURL, u.Path)
	}
	if u.Fragment != "" {
		return cfg, fmt.Errorf("%w: unexpected fragment", ErrBadSMTPURL)
	}
	cfg.Host = u.Hostname()
	if cfg.Host == "" {
		return cfg, fmt.Errorf("%w: no host", ErrBadSMTPURL)
	}
	if p := u.Port(); p != "" {
		port, err := strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return cfg, fmt.Errorf("%w: port %q out of range", ErrBadSMTPURL, p)
		}
		cfg.Port = port
	} else if strings.HasSuffix(u.Host, ":") {
		return cfg, fmt.Errorf("%w: empty port", ErrBadSMTPURL)
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
		if cfg.Username == "" && cfg.Password != "" {
			return cfg, fmt.Errorf("%w: password without a user name", ErrBadSMTPURL)
		}
	}
	if err := applySMTPQuery(&cfg, u.Scheme, u.RawQuery); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// applySMTPQuery reads SMTP_URL's parameters (starttls, from, insecure_skip_verify,
// timeout) into cfg; scheme is the URL's (starttls does not apply to smtps).
func applySMTPQuery(cfg *SMTPConfig, scheme, rawQuery string) error {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return fmt.Errorf("%w: query: %w", ErrBadSMTPURL, err)
	}
	for key, values := range q {
		if len(values) != 1 {
			return fmt.Errorf("%w: %s given %d times", ErrBadSMTPURL, key, len(values))
		}
		v := values[0]
		switch key {
		case "starttls":
			if scheme == "smtps" {
				return fmt.Errorf("%w: starttls does not apply to smtps (TLS from the start)", ErrBadSMTPURL)
			}
			switch mode := TLSMode(strings.ToLower(v)); mode {
			case TLSOpportunistic, TLSRequired, TLSNone:
				cfg.TLS = mode
			default:
				return fmt.Errorf("%w: starttls=%q (want required, none or opportunistic)", ErrBadSMTPURL, v)
			}
		case "from":
			if _, err := parseFrom(v); err != nil {
				return fmt.Errorf("%w: from: %w", ErrBadSMTPURL, err)
			}
			cfg.From = v
		case "insecure_skip_verify":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%w: insecure_skip_verify=%q (want 1 or 0)", ErrBadSMTPURL, v)
			}
			cfg.InsecureSkipVerify = b
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("%w: timeout=%q (want a positive duration such as 10s)", ErrBadSMTPURL, v)
			}
			cfg.Timeout = d
		default:
			return fmt.Errorf("%w: unknown parameter %q (known: starttls, from, insecure_skip_verify, timeout)", ErrBadSMTPURL, key)
		}
	}
	return nil
}

// withDefaults fills the empty fields and checks the rest.
func (c SMTPConfig) withDefaults() (SMTPConfig, error) {
	if c.Host == "" {
		return c, errors.New("smtp config: no host")
	}
	if c.Port < 1 || c.Port > 65535 {
		return c, fmt.Errorf("smtp config: port %d out of range", c.Port)
	}
	switch c.TLS {
	case "":
		c.TLS = TLSOpportunistic
	case TLSOpportunistic, TLSRequired, TLSNone, TLSImplicit:
	default:
		return c, fmt.Errorf("smtp config: unknown TLS mode %q", c.TLS)
	}
	if c.Username == "" && c.Password != "" {
		return c, errors.New("smtp config: password without a user name")
	}
	if c.From == "" {
		c.From = DefaultFrom
	}
	if _, err := parseFrom(c.From); err != nil {
		return c, fmt.Errorf("smtp config: from: %w", err)
	}
	if c.Timeout < 0 {
		return c, fmt.Errorf("smtp config: negative timeout %s", c.Timeout)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c, nil
}
