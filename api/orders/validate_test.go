package orders

import (
	"errors"
	"strings"
	"testing"

	"parla/providers"
)

func code(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Code
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func TestValidateEmail(t *testing.T) {
	tests := []struct {
		name, email, verify, want string
	}{
		{"ok", "a@example.com", "a@example.com", ""},
		{"trimmed", " a@example.com ", "a@example.com", ""},
		{"empty", "", "", "invalid_email"},
		{"no at", "example.com", "example.com", "invalid_email"},
		{"no dot in domain", "a@localhost", "a@localhost", "invalid_email"},
		{"display name", "Eve <e@example.com>", "Eve <e@example.com>", "invalid_email"},
		{"right-to-left override", "moc.elpmaxe\u202E@a.com", "moc.elpmaxe\u202E@a.com", "invalid_email"},
		{"isolate", "\u2067a@example.com", "\u2067a@example.com", "invalid_email"},
		{"CR LF header injection", "a@example.com\r\nBcc: x@evil.com", "a@example.com\r\nBcc: x@evil.com", "invalid_email"},
		{"LF inside", "a\n@example.com", "a\n@example.com", "invalid_email"},
		// Unicode's own line breaks and C1 controls: some mail readers end a header line there.
		{"line separator", "a\u2028@example.com", "a\u2028@example.com", "invalid_email"},
		{"paragraph separator", "a@exam\u2029ple.com", "a@exam\u2029ple.com", "invalid_email"},
		{"next line", "a\u0085b@example.com", "a\u0085b@example.com", "invalid_email"},
		{"tab", "a\tb@example.com", "a\tb@example.com", "invalid_email"},
		{"two addresses", "a@example.com, b@example.com", "a@example.com, b@example.com", "invalid_email"},
		{"too long", strings.Repeat("a", 250) + "@example.com", strings.Repeat("a", 250) + "@example.com", "invalid_email"},
		{"mismatch", "a@example.com", "b@example.com", "email_mismatch"},
		{"verify empty", "a@example.com", "", "email_mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ValidateEmail(tt.email, tt.verify)
			if got := code(err); got != tt.want {
				t.Errorf("ValidateEmail(%q, %q) = %q, want %q", tt.email, tt.verify, got, tt.want)
			}
		})
	}
}

func TestValidateTTS(t *testing.T) {
	limits := TTSLimits{Voices: providers.Voices, Formats: providers.SpeechFormats, MinSpeed: 0.25, MaxSpeed: 4, MaxChars: 10}
	ok := TTSParams{Voice: "alloy", Format: "mp3", Speed: 1, Text: "hello"}
	tests := []struct {
		name string
		edit func(*TTSParams)
		want string
	}{
		{"ok", func(*TTSParams) {}, ""},
		{"voice upper case", func(p *TTSParams) { p.Voice = "Shimmer" }, ""},
		{"unknown voice", func(p *TTSParams) { p.Voice = "bob" }, "invalid_voice"},
		{"unknown format", func(p *TTSParams) { p.Format = "wav" }, "invalid_format"},
		{"empty format means mp3", func(p *TTSParams) { p.Format = "" }, ""},
		{"slowest", func(p *TTSParams) { p.Speed = 0.25 }, ""},
		{"fastest", func(p *TTSParams) { p.Speed = 4 }, ""},
		{"too slow", func(p *TTSParams) { p.Speed = 0.24 }, "invalid_speed"},
		{"too fast", func(p *TTSParams) { p.Speed = 4.01 }, "invalid_speed"},
		{"empty text", func(p *TTSParams) { p.Text = "" }, "empty_text"},
		{"blank text", func(p *TTSParams) { p.Text = " \n\t" }, "empty_text"},
		{"at the limit", func(p *TTSParams) { p.Text = "日本語日本語日本語日" }, ""},
		{"over the limit", func(p *TTSParams) { p.Text = "hello world" }, "text_too_long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.edit(&p)
			_, err := limits.ValidateTTS(p)
			if got := code(err); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidateLocale(t *testing.T) {
	for _, l := range Locales {
		if got, err := ValidateLocale(l); err != nil || got != l {
			t.Errorf("ValidateLocale(%q) = %q, %v", l, got, err)
		}
	}
	if got, _ := ValidateLocale(""); got != "en" {
		t.Errorf("empty locale = %q, want en", got)
	}
	if _, err := ValidateLocale("ja"); code(err) != "invalid_locale" {
		t.Errorf("ja accepted: %v", err)
	}
}
