// Package texts is every translated text the server writes itself, in Parla's six interface
// languages: the order letters, the link page, the built-in test checkout, the checkout's
// line items and the voice samples. The web UI's own strings stay in webui/src/locales; the
// operator's admin area is English only. It also writes numbers and money as each language
// does (FormatCount, FormatAmount, below) and picks the plural form of a counted word by
// CLDR's rules (plural.go), so an amount or a count reads alike on the form, the test
// checkout, the link page and in the letters. It imports nothing of the project's but webui's table of interface languages
// (languages.go), so every part may use it.
//
// Placeholders are written in braces ({service}, {date}, {n}…) and filled by the caller
// with plain values; TestCatalogComplete checks that every language has every key, none
// empty, with the same placeholders as English.
package texts

import (
	"strconv"
	"strings"
)

// locales are the interface languages' codes (languages.go), English first (the fallback).
var locales = func() []string {
	out := make([]string, len(languages))
	for i, l := range languages {
		out[i] = l.ID
	}
	return out
}()

// catalog maps a language to its texts by key, merged from the parts (letters.go,
// linkpage.go, editor.go, checkout.go). Read-only: nothing writes to it after initialization.
var catalog = merge(letters, linkPage, editorLink, testCheckout, products, samples, credit)

// Locales returns the interface languages the server writes in; en is the fallback.
func Locales() []string { return append([]string(nil), locales...) }

// Locale returns the supported interface language for a requested one: the six codes as
// they are, a region or script suffix dropped (es-MX → es), ja accepted for jp, anything
// else en. It is the one rule every server-written page and letter follows.
func Locale(requested string) string {
	l := strings.ToLower(strings.TrimSpace(requested))
	if i := strings.IndexAny(l, "-_"); i >= 0 {
		l = l[:i]
	}
	l = LanguageCode(l, true)
	if _, ok := catalog[l]; ok {
		return l
	}
	return "en"
}

// Lang is the texts of one supported interface language.
type Lang struct {
	code  string
	texts map[string]string
}

// In returns the texts of the supported language nearest to requested (see Locale).
func In(requested string) Lang {
	code := Locale(requested)
	return Lang{code: code, texts: catalog[code]}
}

// Code is the interface language's code (en, jp, es, ru, zh, ar).
func (l Lang) Code() string { return l.code }

// Get returns the text under key, or "" for a key the catalog lacks (no key is empty,
// so "" always means a missing one).
func (l Lang) Get(key string) string { return l.texts[key] }

// Lookup returns the text under key and whether the catalog has it, for texts that are
// said only when there is one (a refund's reason).
func (l Lang) Lookup(key string) (string, bool) {
	t, ok := l.texts[key]
	return t, ok
}

// Tag is the language's BCP 47 tag for an html lang attribute (the table's: ja, zh-Hans).
func (l Lang) Tag() string {
	row, _ := language(l.code)
	return row.Tag
}

// Dir is the language's writing direction for an html dir attribute.
func (l Lang) Dir() string {
	if row, _ := language(l.code); row.RTL {
		return "rtl"
	}
	return "ltr"
}

// merge joins the parts' texts into one catalog. Two parts with one key would make one of
// them say the other's words: that is a mistake caught at start.
func merge(parts ...map[string]map[string]string) map[string]map[string]string {
	all := map[string]map[string]string{}
	for _, part := range parts {
		for lng, texts := range part {
			if all[lng] == nil {
				all[lng] = map[string]string{}
			}
			for k, t := range texts {
				if _, dup := all[lng][k]; dup {
					panic("texts: key " + k + " is in two parts of the catalog")
				}
				all[lng][k] = t
			}
		}
	}
	return all
}

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
