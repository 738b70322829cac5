package orders

import (
	"errors"
	"fmt"
	"math"
	"net/mail"
	"slices"
	"strings"
)

// InputError is a request the order book refuses: a stable Code the UI translates and an
// English Message for people reading the API.
type InputError struct {
	Code    string
	Message string
}

func (e *InputError) Error() string { return e.Code + ": " + e.Message }

func bad(code, format string, args ...any) *InputError {
	return &InputError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Errors callers branch on.
var (
	ErrUnpaid             = errors.New("order not paid")
	ErrWrongService       = errors.New("session belongs to another service")
	ErrServiceUnavailable = errors.New("service unavailable")
	ErrPriceMismatch      = errors.New("price differs from the server's")
	ErrDuplicateEvent     = errors.New("webhook event already handled")
)

// Locales are the interface languages; messages are written in the order's locale.
var Locales = []string{"en", "jp", "es", "ru", "zh", "ar"}

// maxEmailLen is RFC 5321's limit on a forward path.
const maxEmailLen = 254

// ValidateEmail checks the visitor's address and its confirmation and returns the
// address to use. Only a bare address is accepted: no display name, no CR/LF.
func ValidateEmail(email, verify string) (string, error) {
	email, verify = strings.TrimSpace(email), strings.TrimSpace(verify)
	if email == "" {
		return "", bad("invalid_email", "an e-mail address is required")
	}
	if len(email) > maxEmailLen || strings.ContainsAny(email, "\r\n\x00") {
		return "", bad("invalid_email", "the e-mail address is not valid")
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Name != "" || addr.Address != email || !strings.Contains(addr.Address[strings.LastIndexByte(addr.Address, '@')+1:], ".") {
		return "", bad("invalid_email", "the e-mail address is not valid")
	}
	if verify != email {
		return "", bad("email_mismatch", "the two e-mail addresses differ")
	}
	return email, nil
}

// ValidateLocale returns the locale to use; empty means en.
func ValidateLocale(locale string) (string, error) {
	if locale == "" {
		return "en", nil
	}
	if !slices.Contains(Locales, locale) {
		return "", bad("invalid_locale", "locale must be one of %s", strings.Join(Locales, ", "))
	}
	return locale, nil
}

// TTSLimits bound a text-to-speech order.
type TTSLimits struct {
	Voices   []string
	Formats  []string
	MinSpeed float64
	MaxSpeed float64
	MaxChars int64
}

// ValidateTTS checks a text-to-speech order's parameters.
func (l TTSLimits) ValidateTTS(p TTSParams) (TTSParams, error) {
	p.Voice = strings.ToLower(strings.TrimSpace(p.Voice))
	if !slices.Contains(l.Voices, p.Voice) {
		return p, bad("invalid_voice", "voice must be one of %s", strings.Join(l.Voices, ", "))
	}
	p.Format = strings.ToLower(strings.TrimSpace(p.Format))
	if p.Format == "" {
		p.Format = l.Formats[0]
	}
	if !slices.Contains(l.Formats, p.Format) {
		return p, bad("invalid_format", "format must be one of %s", strings.Join(l.Formats, ", "))
	}
	if math.IsNaN(p.Speed) || p.Speed < l.MinSpeed || p.Speed > l.MaxSpeed {
		return p, bad("invalid_speed", "speed must be between %g and %g", l.MinSpeed, l.MaxSpeed)
	}
	if strings.TrimSpace(p.Text) == "" {
		return p, bad("empty_text", "the text is empty")
	}
	if n := CountChars(p.Text); n > l.MaxChars {
		return p, bad("text_too_long", "the text has %d characters; the maximum is %d", n, l.MaxChars)
	}
	return p, nil
}
