package mail

import (
	"bytes"
	"errors"
	netmail "net/mail"
	"net/url"
	"strings"
	"testing"
	"time"

	"parla/providers"
)

// fuzzSecret is the password FuzzParseSMTPURL slips into the URL's user info: no error or
// description may repeat it. It holds none of the characters that end a user info.
const fuzzSecret = "Zq7-fuzz-Secret-Xw9"

// FuzzParseSMTPURL: an accepted SMTP_URL gives a configuration NewSMTP accepts as it is
// (host, port in range, a known TLS mode, smtps always implicit TLS, no password without a
// user); the sender address it names produces exactly one From header line that reads back
// as the same address, so no CR/LF smuggles a header in; and neither errors nor String()
// repeat the password.
func FuzzParseSMTPURL(f *testing.F) {
	for _, s := range []string{
		"smtp://user:pass@mail.example.com:2525?starttls=required",
		"smtps://mail.example.com?from=Parla%20%3Corders%40parla.example%3E&timeout=3s",
		"smtp://mail.example.com?from=a%40b.example%0D%0ABcc%3A%20x%40y.example",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkSMTPURL(t, raw)
		// The same URL with a password: it must not leak, whatever else is wrong.
		if i := strings.Index(raw, "://"); i >= 0 {
			withSecret := raw[:i+3] + "fuzzuser:" + fuzzSecret + "@" + raw[i+3:]
			cfg, err := checkSMTPURL(t, withSecret)
			if u, err := url.Parse(withSecret); err == nil {
				if pw, _ := u.User.Password(); !strings.Contains(pw, fuzzSecret) {
					return // the text landed elsewhere (a path or a query), not in the password
				}
			}
			if err != nil && strings.Contains(err.Error(), fuzzSecret) {
				t.Fatalf("ParseSMTPURL(%q): error repeats the password: %v", withSecret, err)
			}
			if err == nil && strings.Contains(cfg.String(), fuzzSecret) {
				t.Fatalf("ParseSMTPURL(%q).String() repeats the password: %s", withSecret, cfg)
			}
		}
	})
}

// checkSMTPURL parses raw and holds the properties of the result.
func checkSMTPURL(t *testing.T, raw string) (SMTPConfig, error) {
	t.Helper()
	cfg, err := ParseSMTPURL(raw)
	if err != nil {
		if !errors.Is(err, ErrBadSMTPURL) {
			t.Fatalf("ParseSMTPURL(%q): %v does not wrap ErrBadSMTPURL", raw, err)
		}
		return cfg, err
	}
	if cfg.Host == "" || cfg.Port < 1 || cfg.Port > 65535 || cfg.Timeout < 0 {
		t.Fatalf("ParseSMTPURL(%q) = %+v", raw, cfg)
	}
	if strings.EqualFold(raw[:min(len(raw), 6)], "smtps:") != (cfg.TLS == TLSImplicit) {
		t.Fatalf("ParseSMTPURL(%q): TLS %q", raw, cfg.TLS)
	}
	if cfg.Username == "" && cfg.Password != "" {
		t.Fatalf("ParseSMTPURL(%q): a password without a user name", raw)
	}
	full, err := cfg.withDefaults()
	if err != nil {
		t.Fatalf("ParseSMTPURL(%q) = %+v, which NewSMTP refuses: %v", raw, cfg, err)
	}
	checkFromHeader(t, full.From)
	return cfg, nil
}

// checkFromHeader writes a message from the sender address from and reads its header back:
// one From line, the same address, and no header the caller did not set.
func checkFromHeader(t *testing.T, from string) {
	t.Helper()
	addr, err := parseFrom(from)
	if err != nil {
		t.Fatalf("accepted sender %q that parseFrom refuses: %v", from, err)
	}
	msg, err := newMsg(addr, providers.Message{To: "visitor@example.com", Subject: "Parla", Text: "Hello"}, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatalf("sender %q: %v", from, err)
	}
	var buf bytes.Buffer
	if _, err := msg.WriteTo(&buf); err != nil {
		t.Fatalf("sender %q: writing the message: %v", from, err)
	}
	head, _, _ := bytes.Cut(buf.Bytes(), []byte("\r\n\r\n"))
	var froms int
	for _, line := range strings.Split(string(head), "\r\n") {
		if strings.ContainsAny(line, "\r\n") {
			t.Fatalf("sender %q: a bare CR or LF in the header line %q", from, line)
		}
		name, _, _ := strings.Cut(line, ":")
		switch strings.ToLower(name) {
		case "from":
			froms++
		case "bcc", "cc", "reply-to", "sender":
			t.Fatalf("sender %q put a %s header in the message:\n%s", from, name, head)
		}
	}
	if froms != 1 {
		t.Fatalf("sender %q: %d From headers:\n%s", from, froms, head)
	}
	m, err := netmail.ReadMessage(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("sender %q: the message does not parse: %v\n%s", from, err, head)
	}
	got, err := m.Header.AddressList("From")
	if err != nil || len(got) != 1 || got[0].Address != addr.Address {
		t.Fatalf("sender %q: From reads back as %v (%v), want %s", from, got, err, addr.Address)
	}
}
