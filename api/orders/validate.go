package orders

import (
	"errors"
	"fmt"
	"math"
	netmail "net/mail"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"parla/providers/mail"
	"parla/providers/texts"
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
var Locales = texts.Locales()

// maxEmailLen is RFC 5321's limit on a forward path.
const maxEmailLen = 254

// ValidateEmail checks the visitor's address and its confirmation and returns the
// address to use. Only a bare address is accepted: no display name, nothing that breaks a
// mail header (mail.BreaksHeader: CR, LF, U+0085, U+2028, U+2029, any control).
func ValidateEmail(email, verify string) (string, error) {
	email, verify = strings.TrimSpace(email), strings.TrimSpace(verify)
	if email == "" {
		return "", bad("invalid_email", "an e-mail address is required")
	}
	if len(email) > maxEmailLen || strings.ContainsFunc(email, mail.BreaksHeader) || strings.ContainsFunc(email, isBidiControl) {
		return "", bad("invalid_email", "the e-mail address is not valid")
	}
	addr, err := netmail.ParseAddress(email)
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
	if Unspeakable(p.Text) {
		return p, bad("empty_text", "the text has nothing to speak")
	}
	if n := CountChars(p.Text); n > l.MaxChars {
		return p, bad("text_too_long", "the text has %d characters; the maximum is %d", n, l.MaxChars)
	}
	return p, nil
}

// validateContact checks what every order carries besides its service's parameters: the
// e-mail address (typed twice) and the interface language.
func validateContact(email, verify, locale string) (string, string, error) {
	email, err := ValidateEmail(email, verify)
	if err != nil {
		return "", "", err
	}
	locale, err = ValidateLocale(locale)
	return email, locale, err
}

// TranscriptLanguages are the ISO 639-1 codes a visitor may name as the spoken language
// (OpenAI's list of 57, which whisper.cpp covers too). Empty means detect.
var TranscriptLanguages = []string{
	"af", "ar", "hy", "az", "be", "bs", "bg", "ca", "zh", "hr", "cs", "da", "nl", "en", "et",
	"fi", "fr", "gl", "de", "el", "he", "hi", "hu", "is", "id", "it", "ja", "kn", "kk", "ko",
	"lv", "lt", "mk", "ms", "mr", "mi", "ne", "no", "fa", "pl", "pt", "ro", "ru", "sr", "sk",
	"sl", "es", "sw", "sv", "tl", "ta", "th", "tr", "uk", "ur", "vi", "cy",
}

// isBidiControl reports the characters that reorder text around them (U+202E makes
// "evil\u202Egpj.exe" read "evilexe.jpg"): never needed in a file name or an address.
func isBidiControl(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// displayName keeps a visitor's file name fit for display: no directories, no control or
// bidirectional-override characters, at most 200 bytes.
func displayName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || isBidiControl(r) {
			return -1
		}
		return r
	}, name)
	if name == "." || name == "/" {
		name = ""
	}
	for len(name) > 200 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// Unspeakable reports a text with nothing an engine could read: no letter and no digit
// (white space, punctuation, symbols and emoji alone). Such a text is refused as
// empty_text before any price is shown; the page applies the same rule
// (webui/src/lib/pricing.js, blankText; the shared cases in testdata/blank_text_cases.json).
func Unspeakable(text string) bool {
	return !strings.ContainsFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) })
}
