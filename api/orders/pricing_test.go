package orders

import "testing"

// The boundary cases of the default prices live in testdata/pricing_cases.json, shared
// with the UI; here Quote must charge each of them under its service's rule.
func TestPricingQuoteChargesTheSharedCases(t *testing.T) {
	p := DefaultPricing()
	n := 0
	for _, c := range loadPricingCases(t) {
		for svc, rule := range p.Rules {
			if c.Rule == rule {
				n++
				if got := p.Quote(svc, c.Quantity); got != c.Amount {
					t.Errorf("%s: Quote(%s, %d) = %d, want %d", c.Name, svc, c.Quantity, got, c.Amount)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no shared case uses a default rule")
	}
}

func TestCountCharsCountsCodePoints(t *testing.T) {
	tests := map[string]int64{
		"":           0,
		"abc":        3,
		"héllo":      5,
		"日本語":        3,
		"👍🏽":         2, // two code points, as JavaScript's [...s] counts them
		"مرحبا":      5,
		"a\nb":       3,
		"\xff\xfeab": 4,
	}
	for in, want := range tests {
		if got := CountChars(in); got != want {
			t.Errorf("CountChars(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestParsePricing(t *testing.T) {
	p, err := ParsePricing(`{"rules":{"tts":{"unitAmount":150,"per":500,"rounding":"started"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Quote(TTS, 501); got != 300 {
		t.Errorf("custom TTS price for 501 chars = %d, want 300", got)
	}
	if got := p.Quote(STT, 101); got != 100 {
		t.Errorf("audio rule should keep its default, got %d", got)
	}
	// The operator's price list of the design brief: 1,500 characters at 1.50 per 1,000,
	// charged proportionally, cost 2.25 (not 3.00 as per started block).
	p, err = ParsePricing(`{"rules":{"tts":{"unitAmount":150,"per":1000,"rounding":"proportional"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Quote(TTS, 1500); got != 225 {
		t.Errorf("proportional TTS price for 1500 chars = %d, want 225", got)
	}
	for _, bad := range []string{`{`, `{"rules":{"xyz":{"unitAmount":1,"per":1,"rounding":"started"}}}`,
		`{"rules":{"tts":{"unitAmount":0,"per":1,"rounding":"started"}}}`,
		`{"rules":{"tts":{"unitAmount":1,"per":1,"rounding":"floor"}}}`} {
		if _, err := ParsePricing(bad); err == nil {
			t.Errorf("ParsePricing(%s) accepted a bad price list", bad)
		}
	}
}
