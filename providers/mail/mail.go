// Package mail delivers the order e-mails: over SMTP (github.com/wneessen/go-mail) when
// SMTP_URL is set, or as .eml files in a local outbox directory otherwise. Both build the
// same multipart/alternative UTF-8 message (plain text + HTML), and both refuse header
// injection before anything leaves the process. Render produces the localized texts.
package mail

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	netmail "net/mail"
	"strings"
	"time"
	"unicode"

	gomail "github.com/wneessen/go-mail"

	"parla/providers"
)

// ErrBadHeader is returned (wrapped) when To or Subject contains a line break or a control
// character (see BreaksHeader): the message is refused before anything is written or sent.
var ErrBadHeader = errors.New("line break in mail header")

// BreaksHeader reports the characters no header may hold: control characters (CR, LF, tab,
// NUL, and C1's U+0085 NEXT LINE) and Unicode's line and paragraph separators (U+2028,
// U+2029). Some mail readers and relays end a header line at any of them, which would let
// an address smuggle in a header of its own.
func BreaksHeader(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// ErrBadAddress is returned (wrapped) when To is not a single valid e-mail address.
var ErrBadAddress = errors.New("invalid e-mail address")

// parseFrom checks a configured sender address.
func parseFrom(s string) (*netmail.Address, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, ErrBadHeader
	}
	a, err := netmail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadAddress, err)
	}
	return a, nil
}

// validate checks the caller-controlled headers of m and returns the parsed recipient.
// Errors never repeat the address: logs carry order ids, not addresses.
func validate(m providers.Message) (*netmail.Address, error) {
	if strings.ContainsFunc(m.To, BreaksHeader) {
		return nil, fmt.Errorf("recipient: %w", ErrBadHeader)
	}
	if strings.ContainsFunc(m.Subject, BreaksHeader) {
		return nil, fmt.Errorf("subject: %w", ErrBadHeader)
	}
	to, err := netmail.ParseAddress(m.To)
	if err != nil {
		// net/mail's message quotes the input: leave it out.
		return nil, fmt.Errorf("recipient: %w", ErrBadAddress)
	}
	if strings.TrimSpace(m.Text) == "" && strings.TrimSpace(m.HTML) == "" {
		return nil, errors.New("message has no body")
	}
	return to, nil
}

// newMsg builds the go-mail message that both the SMTP sender and the outbox write, so the
// two paths produce the same bytes apart from Date and Message-ID.
func newMsg(from *netmail.Address, m providers.Message, now time.Time) (*gomail.Msg, error) {
	to, err := validate(m)
	if err != nil {
		return nil, err
	}
	msg := gomail.NewMsg(
		gomail.WithCharset(gomail.CharsetUTF8),
		gomail.WithEncoding(gomail.EncodingQP),
		gomail.WithNoDefaultUserAgent(),
	)
	msg.FromMailAddress(from)
	msg.ToMailAddress(to)
	// Preformatted: go-mail folds an encoded subject before its first word, so parsers read
	// it with a leading space; subjectHeader starts it on the Subject: line.
	msg.SetGenHeaderPreformatted(gomail.HeaderSubject, subjectHeader(m.Subject))
	msg.SetDateWithValue(now)
	id, err := messageID(from, m.ID, now)
	if err != nil {
		return nil, err
	}
	msg.SetMessageIDWithValue(id)
	switch {
	case m.Text != "" && m.HTML != "":
		msg.SetBodyString(gomail.TypeTextPlain, m.Text)
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	case m.Text != "":
		msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	default:
		msg.SetBodyString(gomail.TypeTextHTML, m.HTML)
	}
	return msg, nil
}

// subjectHeader is the Subject field's value as written: printable ASCII as it is, anything
// else as RFC 2047 encoded words (UTF-8, Q), one per line after the first, folded between
// words as RFC 5322 allows, so that the value starts on the Subject: line itself.
func subjectHeader(subject string) string {
	ascii := true
	for _, r := range subject {
		if r < 0x20 || r > 0x7e {
			ascii = false
			break
		}
	}
	if ascii {
		return subject
	}
	return strings.ReplaceAll(mime.QEncoding.Encode("UTF-8", subject), "?= =?", "?=\r\n =?")
}

// messageID makes the Message-ID in the sender's domain (go-mail's default would use this
// machine's host name): the message's own ID when it has one, else a unique one.
func messageID(from *netmail.Address, stable string, now time.Time) (string, error) {
	domain := "localhost"
	if i := strings.LastIndexByte(from.Address, '@'); i >= 0 && i < len(from.Address)-1 {
		domain = from.Address[i+1:]
	}
	if id := safeID(stable); id != "" {
		return id + "@" + domain, nil
	}
	r, err := randomHex(12)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%s@%s", now.UnixNano(), r, domain), nil
}

// safeID keeps the letters, digits and . _ - of a message ID: what a Message-ID and a file
// name can both hold.
func safeID(id string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '.' || r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return -1
	}, id)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// redacted hides the recipient address in an error text (go-mail's send errors list the
// affected recipients) while keeping the chain for errors.Is/As.
type redacted struct {
	err  error
	addr string
}

func (r redacted) Error() string {
	if r.addr == "" {
		return r.err.Error()
	}
	return strings.ReplaceAll(r.err.Error(), r.addr, "<recipient>")
}

func (r redacted) Unwrap() error { return r.err }
