package orders

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unicode/utf8"

	"parla/providers"
)

// Service names one of the three paid services: providers.Service, the one enum the
// letters (providers/mail) use too.
type Service = providers.Service

// The services Parla sells (providers.TTS, STT, VTT).
const (
	TTS = providers.TTS // text-to-speech
	STT = providers.STT // audio-to-text (the spec's route name is "sst")
	VTT = providers.VTT // video-to-text
)

// Rounding says how a quantity is turned into billable units.
type Rounding string

const (
	// PerStartedUnit charges UnitAmount for every started Per (TTS: 99 × ceil(chars/1000)).
	PerStartedUnit Rounding = "started"
	// Proportional charges UnitAmount × quantity / Per, rounded up to the cent
	// (audio: ceil(99 × s / 100); video: ceil(99 × s / 60)).
	Proportional Rounding = "proportional"
)

// Rule prices one service. Amounts are integer minor units of Currency; never floats.
type Rule struct {
	UnitAmount int64    `json:"unitAmount"` // cents per Per
	Per        int64    `json:"per"`        // characters (TTS) or seconds (audio, video)
	MinAmount  int64    `json:"minAmount"`  // floor for any non-zero quantity
	Rounding   Rounding `json:"rounding"`
}

// Pricing holds the rules for every service; it is the one place prices are decided.
type Pricing struct {
	Currency string           `json:"currency"`
	Rules    map[Service]Rule `json:"rules"`
}

// DefaultPricing is the spec's price list ("Business constants and limits", as the design
// brief reads it).
func DefaultPricing() Pricing {
	return Pricing{
		Currency: "eur",
		Rules: map[Service]Rule{
			TTS: {UnitAmount: 99, Per: 1000, Rounding: PerStartedUnit},
			STT: {UnitAmount: 99, Per: 100, MinAmount: 99, Rounding: Proportional},
			VTT: {UnitAmount: 99, Per: 60, MinAmount: 99, Rounding: Proportional},
		},
	}
}

// ParsePricing reads an operator's price list (JSON in the shape of Pricing) over the
// defaults: services it leaves out keep their default rule.
func ParsePricing(s string) (Pricing, error) {
	p := DefaultPricing()
	if s == "" {
		return p, nil
	}
	var in Pricing
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return p, fmt.Errorf("parsing pricing JSON: %w", err)
	}
	if in.Currency != "" {
		p.Currency = in.Currency
	}
	for svc, r := range in.Rules {
		if !svc.Valid() {
			return p, fmt.Errorf("pricing: unknown service %q", svc)
		}
		if r.UnitAmount <= 0 || r.Per <= 0 || r.MinAmount < 0 {
			return p, fmt.Errorf("pricing %s: unitAmount and per must be positive, minAmount not negative", svc)
		}
		if r.Rounding != PerStartedUnit && r.Rounding != Proportional {
			return p, fmt.Errorf("pricing %s: rounding must be %q or %q", svc, PerStartedUnit, Proportional)
		}
		p.Rules[svc] = r
	}
	return p, nil
}

// Amount prices quantity (characters or whole seconds) of a service. Zero costs nothing.
// GET /api/config publishes each rule as it is, and the UI's priceCents
// (webui/src/lib/pricing.js) repeats this arithmetic: both pass the cases of
// testdata/pricing_cases.json, so change the three together.
func (r Rule) Amount(quantity int64) int64 {
	if quantity <= 0 {
		return 0
	}
	if r.Per <= 0 || r.UnitAmount < 0 { // refused by ParsePricing; never divide by zero
		return max(r.MinAmount, 0)
	}
	var amount int64
	switch r.Rounding {
	case PerStartedUnit:
		amount = mulSat(r.UnitAmount, quantity/r.Per+min(quantity%r.Per, 1))
	default:
		amount = mulCeilDiv(r.UnitAmount, quantity, r.Per)
	}
	return max(amount, r.MinAmount)
}

// mulSat is a×b for non-negative a and b, or the largest int64 when it would not fit: an
// absurd quantity or price list costs the most money there is, never a wrapped amount.
func mulSat(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// MilliAmount prices quantity/scale units (characters, or milliseconds of audio with scale
// 1000) proportionally, with no minimum and no rounding up: in thousandths of a minor unit,
// rounded half up. The API's per-call price (api/credit); the site's orders use Amount.
func (r Rule) MilliAmount(quantity, scale int64) int64 {
	if quantity <= 0 || scale <= 0 || r.Per <= 0 || r.UnitAmount <= 0 {
		return 0
	}
	d := mulSat(r.Per, scale)
	return mulDivAdd(mulSat(r.UnitAmount, 1000), quantity, d, d/2)
}

// mulCeilDiv is ⌈a×b/d⌉ for non-negative a, b and positive d, computed in 128 bits, or
// the largest int64 when it would not fit.
func mulCeilDiv(a, b, d int64) int64 { return mulDivAdd(a, b, d, d-1) }

// mulDivAdd is ⌊(a×b+add)/d⌋ for non-negative a, b, add < d and positive d, computed in
// 128 bits, or the largest int64 when it would not fit.
func mulDivAdd(a, b, d, add int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	lo, carry := bits.Add64(lo, uint64(add), 0)
	hi += carry
	if hi >= uint64(d) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(d))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// Quote prices quantity for a service.
func (p Pricing) Quote(svc Service, quantity int64) int64 {
	return p.Rules[svc].Amount(quantity)
}

// CountChars counts text the way the price and the page count it: Unicode code points
// (JavaScript's [...text].length). Invalid UTF-8 bytes count one each.
func CountChars(text string) int64 {
	return int64(utf8.RuneCountInString(text))
}

// Seconds is a duration in whole seconds, rounded up, as the price rules count it.
func Seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
