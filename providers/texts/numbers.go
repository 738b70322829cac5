package texts

import (
	"strconv"
	"strings"
)

// How each interface language writes numbers and money. The letters, the link page and the
// built-in test checkout all write amounts with FormatAmount, so a visitor reads one price
// the same way on the form (Intl.NumberFormat in webui/src/lib/pricing.js), the checkout
// and the receipt.

// numbers is how a locale writes numbers and amounts (CLDR's patterns for these six
// languages, with Western digits everywhere: Parla's pages use them in Arabic too).
type numbers struct {
	decimal, group string
	minGroup       int  // digits before grouping starts: Spanish writes 1234 but 12.345
	symbolAfter    bool // 0,99 € rather than €0.99
}

const nbsp = "\u00a0"

var numberStyles = map[string]numbers{
	"en": {".", ",", 4, false},
	"jp": {".", ",", 4, false},
	"zh": {".", ",", 4, false},
	"es": {",", ".", 5, true},
	"ru": {",", nbsp, 4, true},
	"ar": {".", ",", 4, true},
}

// currencies are the symbols and minor-unit digits of the currencies a shop here would
// charge in; others are written with their code, and two decimals unless zeroDecimal.
var currencies = map[string]struct {
	symbol string
	digits int
}{
	"EUR": {"€", 2}, "USD": {"$", 2}, "GBP": {"£", 2}, "JPY": {"¥", 0}, "CHF": {"CHF", 2},
}

// zeroDecimal are the currencies Stripe counts in whole units (its amounts have no cents).
var zeroDecimal = map[string]bool{
	"BIF": true, "CLP": true, "DJF": true, "GNF": true, "JPY": true, "KMF": true, "KRW": true, "MGA": true,
	"PYG": true, "RWF": true, "UGX": true, "VND": true, "VUV": true, "XAF": true, "XOF": true, "XPF": true,
}

// FormatCount writes a whole number with the locale's digit grouping (1,234 / 1 234).
func FormatCount(locale string, n int64) string {
	st := numberStyles[Locale(locale)]
	return group(strconv.FormatInt(n, 10), st)
}

func group(digits string, st numbers) string {
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	if len(digits) >= st.minGroup {
		var b strings.Builder
		for i, r := range digits {
			if i > 0 && (len(digits)-i)%3 == 0 {
				b.WriteString(st.group)
			}
			b.WriteRune(r)
		}
		digits = b.String()
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// FormatAmount writes an amount in minor units the way the locale writes money:
// €0.99 in English, 0,99 € in Spanish (the space is a no-break space).
func FormatAmount(locale string, minor int64, currency string) string {
	st := numberStyles[Locale(locale)]
	code := strings.ToUpper(currency)
	c, ok := currencies[code]
	if !ok {
		c.symbol, c.digits = code, 2
		if zeroDecimal[code] {
			c.digits = 0
		}
	}
	neg := minor < 0
	if neg {
		minor = -minor
	}
	unit := int64(1)
	for range c.digits {
		unit *= 10
	}
	n := group(strconv.FormatInt(minor/unit, 10), st)
	if c.digits > 0 {
		n += st.decimal + strings.Repeat("0", c.digits-len(strconv.FormatInt(minor%unit, 10))) + strconv.FormatInt(minor%unit, 10)
	}
	if neg {
		n = "-" + n
	}
	if st.symbolAfter {
		return n + nbsp + c.symbol
	}
	if len(c.symbol) > 1 && c.symbol == code {
		return c.symbol + nbsp + n
	}
	return c.symbol + n
}
