package orders

import (
	"math"
	"testing"
)

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

// The API's per-call price (api/credit): proportional, no minimum, no rounding up, in
// thousandths of a cent rounded half up.
func TestMilliAmountIsProportionalAndRoundsHalfUp(t *testing.T) {
	p := DefaultPricing()
	tts, stt := p.Rules[TTS], p.Rules[STT]
	for _, c := range []struct {
		rule            Rule
		quantity, scale int64
		want            int64
	}{
		{tts, 120, 1, 11_880},       // 120 characters: 11.88 cents
		{tts, 1, 1, 99},             // one character: 0.099 cents
		{tts, 4096, 1, 405_504},     // the API's longest input
		{stt, 20_000, 1000, 19_800}, // 20 s of audio: 19.8 cents
		{stt, 1, 1000, 1},           // 1 ms: 0.00099 cents, 0.001 rounded half up
		{Rule{UnitAmount: 1, Per: 3, Rounding: Proportional}, 1, 1, 333},
		{Rule{UnitAmount: 1, Per: 2000, Rounding: Proportional}, 1, 1, 1}, // 0.5 → 1
		{Rule{UnitAmount: 1, Per: 2001, Rounding: Proportional}, 1, 1, 0},
		{tts, 0, 1, 0},
		{tts, -5, 1, 0},
		{tts, 1 << 62, 1, math.MaxInt64},
	} {
		if got := c.rule.MilliAmount(c.quantity, c.scale); got != c.want {
			t.Errorf("%+v.MilliAmount(%d, %d) = %d, want %d", c.rule, c.quantity, c.scale, got, c.want)
		}
	}
}
