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
		lines = append(lines, line("receipt.characters", "n", texts.FormatCount(locale, p.Characters)))
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
		lines = append(lines, line(amountKey, "amount", texts.FormatAmount(locale, p.Amount, p.Currency)))
	}
	return lines
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
