package mail

import (
	"strconv"
	"strings"
	"time"

	"parla/providers/texts"
)

// receiptLines lists what was bought (service, length or characters, format, voice) and
// the amount under amountKey (charged or refunded), in the language's words and numbers.
func receiptLines(tr texts.Lang, service string, p Purchase, amountKey string) []string {
	locale := tr.Code()
	line := func(key, name, value string) string { return strings.ReplaceAll(tr.Get(key), "{"+name+"}", value) }
	lines := []string{line("receipt.service", "service", service)}
	if p.Characters > 0 {
		lines = append(lines, line("receipt.characters", "n", FormatCount(locale, p.Characters)))
	}
	if p.Seconds > 0 {
		lines = append(lines, line("receipt.duration", "duration", FormatDuration(p.Seconds)))
	}
	if p.Format != "" {
		lines = append(lines, line("receipt.format", "format", FormatName(p.Format)))
	}
	if p.Voice != "" {
		lines = append(lines, line("receipt.voice", "voice", VoiceName(p.Voice)))
	}
	if p.Currency != "" {
		lines = append(lines, line(amountKey, "amount", FormatAmount(locale, p.Amount, p.Currency)))
	}
	return lines
}

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
// charge in; others are written with their code and two decimals.
var currencies = map[string]struct {
	symbol string
	digits int
}{
	"EUR": {"€", 2}, "USD": {"$", 2}, "GBP": {"£", 2}, "JPY": {"¥", 0}, "CHF": {"CHF", 2},
}

// FormatCount writes a whole number with the locale's digit grouping (1,234 / 1 234).
func FormatCount(locale string, n int64) string {
	st := numberStyles[texts.Locale(locale)]
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
	st := numberStyles[texts.Locale(locale)]
	code := strings.ToUpper(currency)
	c, ok := currencies[code]
	if !ok {
		c.symbol, c.digits = code, 2
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

// FormatDuration writes a length in seconds as m:ss or h:mm:ss, as players show it.
func FormatDuration(seconds int64) string {
	d := time.Duration(seconds) * time.Second
	h, m, s := int64(d.Hours()), int64(d.Minutes())%60, int64(d.Seconds())%60
	if h > 0 {
		return strconv.FormatInt(h, 10) + ":" + pad2(m) + ":" + pad2(s)
	}
	return strconv.FormatInt(m, 10) + ":" + pad2(s)
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// FormatName writes a format as visitors read it: MP3, SRT, VERBOSE_JSON.
func FormatName(format string) string { return strings.ToUpper(format) }

// VoiceName writes a voice as the form names it (webui/src/lib/voices.js): Nova, not nova.
func VoiceName(id string) string {
	if id == "" {
		return id
	}
	return strings.ToUpper(id[:1]) + id[1:]
}

// FormatDate writes t (UTC) the way the locale writes dates, as the letters do.
func FormatDate(locale string, t time.Time) string { return formatDate(texts.In(locale), t) }

// ReceiptLines lists what was bought and the amount charged, as the delivery letter does.
func ReceiptLines(locale, service string, p Purchase) []string {
	return receiptLines(texts.In(locale), service, p, "receipt.amount")
}
