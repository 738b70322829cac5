package orders

import (
	"errors"
	"math"
	"math/big"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"testing"

	"parla/providers"
)

// FuzzParsePricing: an accepted price list keeps a rule for each of the three services,
// every rule positive with a known rounding and a currency; and its rules price the fuzzed
// quantity as checkAmount requires.
func FuzzParsePricing(f *testing.F) {
	f.Add(`{"currency":"usd","rules":{"tts":{"unitAmount":150,"per":1000,"rounding":"started"}}}`, int64(1001))
	f.Add(`{"rules":{"vtt":{"unitAmount":99,"per":60,"minAmount":99,"rounding":"proportional"}}}`, int64(61))
	f.Fuzz(func(t *testing.T, s string, quantity int64) {
		p, err := ParsePricing(s)
		if err != nil {
			return // config.go refuses to start; what p holds then is never used
		}
		if p.Currency == "" || len(p.Rules) != 3 {
			t.Fatalf("ParsePricing(%q) = %+v", s, p)
		}
		for _, svc := range []Service{TTS, STT, VTT} {
			r, ok := p.Rules[svc]
			if !ok || r.UnitAmount <= 0 || r.Per <= 0 || r.MinAmount < 0 || (r.Rounding != PerStartedUnit && r.Rounding != Proportional) {
				t.Fatalf("ParsePricing(%q): %s rule %+v (present %t)", s, svc, r, ok)
			}
			checkAmount(t, r, quantity)
		}
	})
}

// FuzzRuleAmount checks Rule.Amount over any rule ParsePricing would accept and any
// quantity (see checkAmount).
func FuzzRuleAmount(f *testing.F) {
	f.Add(int64(99), int64(1000), int64(0), false, int64(1001))
	f.Add(int64(99), int64(60), int64(99), true, int64(61))
	f.Fuzz(func(t *testing.T, unit, per, minAmount int64, proportional bool, quantity int64) {
		r := Rule{UnitAmount: unit, Per: per, MinAmount: minAmount, Rounding: PerStartedUnit}
		if proportional {
			r.Rounding = Proportional
		}
		if unit <= 0 || per <= 0 || minAmount < 0 {
			return // ParsePricing refuses such a rule
		}
		checkAmount(t, r, quantity)
	})
}

// checkAmount: nothing costs nothing; a positive quantity is never free, never negative,
// never below the rule's minimum; where the rule's arithmetic fits in int64 the amount is
// exactly the rule's (worked out in arbitrary precision), and one more unit never costs
// less.
func checkAmount(t *testing.T, r Rule, quantity int64) {
	t.Helper()
	got := r.Amount(quantity)
	if quantity <= 0 {
		if got != 0 {
			t.Fatalf("%+v.Amount(%d) = %d, want 0", r, quantity, got)
		}
		return
	}
	if got < 0 || got < r.MinAmount {
		t.Fatalf("%+v.Amount(%d) = %d: negative or below the minimum", r, quantity, got)
	}
	if got == 0 {
		t.Fatalf("%+v.Amount(%d) = 0 for a positive quantity", r, quantity)
	}
	if want := exactAmount(r, quantity); got != want {
		t.Fatalf("%+v.Amount(%d) = %d, want %d", r, quantity, got, want)
	}
	if quantity < math.MaxInt64 {
		if next := r.Amount(quantity + 1); next < got {
			t.Fatalf("%+v: Amount(%d) = %d but Amount(%d) = %d", r, quantity, got, quantity+1, next)
		}
	}
}

// exactAmount is the rule of testdata/pricing_cases.json in arbitrary precision.
func exactAmount(r Rule, quantity int64) int64 {
	u, p, q := big.NewInt(r.UnitAmount), big.NewInt(r.Per), big.NewInt(quantity)
	ceil := func(a, b *big.Int) *big.Int {
		n := new(big.Int).Add(a, b)
		n.Sub(n, big.NewInt(1))
		return n.Quo(n, b)
	}
	var amount *big.Int
	if r.Rounding == PerStartedUnit {
		amount = new(big.Int).Mul(u, ceil(q, p))
	} else {
		amount = ceil(new(big.Int).Mul(u, q), p)
	}
	if amount.Cmp(big.NewInt(r.MinAmount)) < 0 {
		return r.MinAmount
	}
	if !amount.IsInt64() {
		return math.MaxInt64 // Amount saturates
	}
	return amount.Int64()
}

// FuzzValidateEmail: an accepted address is the trimmed input, typed the same twice, at
// most 254 bytes, one bare address that net/mail reads back unchanged, with a dot in its
// domain and no control character (it goes into a To header); it is accepted again as it
// is. A refusal is invalid_email or email_mismatch, and email_mismatch only when the
// address itself is fine.
func FuzzValidateEmail(f *testing.F) {
	f.Add("a@example.com", "a@example.com")
	f.Add(" a@example.com ", "b@example.com")
	f.Add("Ada <a@example.com>", "Ada <a@example.com>")
	f.Fuzz(func(t *testing.T, email, verify string) {
		got, err := ValidateEmail(email, verify)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || (ie.Code != "invalid_email" && ie.Code != "email_mismatch") {
				t.Fatalf("ValidateEmail(%q, %q): %v", email, verify, err)
			}
			if ie.Code == "email_mismatch" {
				if _, err := ValidateEmail(email, email); err != nil {
					t.Fatalf("ValidateEmail(%q, %q): email_mismatch, but the address alone is refused: %v", email, verify, err)
				}
				if strings.TrimSpace(email) == strings.TrimSpace(verify) {
					t.Fatalf("ValidateEmail(%q, %q): email_mismatch for the same address", email, verify)
				}
			}
			return
		}
		if got != strings.TrimSpace(email) || got != strings.TrimSpace(verify) || len(got) > 254 {
			t.Fatalf("ValidateEmail(%q, %q) = %q", email, verify, got)
		}
		if strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("ValidateEmail(%q) accepted a control character: %q", email, got)
		}
		a, err := mail.ParseAddress(got)
		if err != nil || a.Name != "" || a.Address != got {
			t.Fatalf("ValidateEmail(%q) = %q, which net/mail reads as %+v (%v)", email, got, a, err)
		}
		at := strings.LastIndexByte(got, '@')
		if at < 1 || !strings.Contains(got[at+1:], ".") {
			t.Fatalf("ValidateEmail(%q) = %q: no dotted domain", email, got)
		}
		if again, err := ValidateEmail(got, got); err != nil || again != got {
			t.Fatalf("ValidateEmail(%q) = %q, then %q, %v", email, got, again, err)
		}
	})
}

// fuzzLimits are the production limits with a small MaxChars.
var fuzzLimits = TTSLimits{Voices: providers.Voices, Formats: providers.SpeechFormats, MinSpeed: 0.25, MaxSpeed: 4, MaxChars: 100}

// FuzzValidateTTS: accepted parameters name a known voice and format (the default when
// none), a speed in range, a text that is not blank and not over the limit, the text left
// as typed; they are accepted again unchanged. A refusal's code names a rule the input
// really breaks.
func FuzzValidateTTS(f *testing.F) {
	f.Add(" Alloy ", "", 1.0, "Hello")
	f.Add("nova", "FLAC", 4.0, "日本語のテキスト")
	f.Fuzz(func(t *testing.T, voice, format string, speed float64, text string) {
		in := TTSParams{Version: 1, Voice: voice, Format: format, Speed: speed, Text: text}
		got, err := fuzzLimits.ValidateTTS(in)
		cleanVoice := strings.ToLower(strings.TrimSpace(voice))
		cleanFormat := strings.ToLower(strings.TrimSpace(format))
		if cleanFormat == "" {
			cleanFormat = fuzzLimits.Formats[0]
		}
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("ValidateTTS(%+v): %v is no InputError", in, err)
			}
			broken := map[string]bool{
				"invalid_voice":  !slices.Contains(fuzzLimits.Voices, cleanVoice),
				"invalid_format": !slices.Contains(fuzzLimits.Formats, cleanFormat),
				"invalid_speed":  math.IsNaN(speed) || speed < fuzzLimits.MinSpeed || speed > fuzzLimits.MaxSpeed,
				"empty_text":     !speakable.MatchString(text),
				"text_too_long":  CountChars(text) > fuzzLimits.MaxChars,
			}
			if !broken[ie.Code] {
				t.Fatalf("ValidateTTS(%+v): %s, a rule the input keeps", in, ie.Code)
			}
			return
		}
		if got.Voice != cleanVoice || got.Format != cleanFormat || got.Text != text || got.Speed != speed || got.Version != in.Version {
			t.Fatalf("ValidateTTS(%+v) = %+v", in, got)
		}
		if !slices.Contains(fuzzLimits.Voices, got.Voice) || !slices.Contains(fuzzLimits.Formats, got.Format) ||
			math.IsNaN(got.Speed) || got.Speed < fuzzLimits.MinSpeed || got.Speed > fuzzLimits.MaxSpeed ||
			!speakable.MatchString(got.Text) || CountChars(got.Text) > fuzzLimits.MaxChars {
			t.Fatalf("ValidateTTS(%+v) accepted %+v", in, got)
		}
		if again, err := fuzzLimits.ValidateTTS(got); err != nil || again != got {
			t.Fatalf("ValidateTTS(%+v) = %+v, then %+v, %v", in, got, again, err)
		}
	})
}

// speakable finds a letter or a digit: a text without one is refused as empty_text.
var speakable = regexp.MustCompile(`[\pL\pN]`)
