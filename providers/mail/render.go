package mail

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"parla/providers"
	"parla/providers/texts"
)

// Kind is which order e-mail to render.
type Kind int

const (
	// Delivered tells the visitor the result is ready, with the download link and its expiry.
	Delivered Kind = iota + 1
	// Refunded tells the visitor the order failed and the payment was refunded in full.
	Refunded
)

// String names the kind for errors and logs.
func (k Kind) String() string {
	switch k {
	case Delivered:
		return "delivered"
	case Refunded:
		return "refunded"
	default:
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Data is what the caller knows about the order.
type Data struct {
	Service   providers.Service // required
	Link      string            // Delivered: the absolute http(s) download link
	ExpiresAt time.Time         // Delivered: when the link stops working; shown in UTC
	OrderRef  string            // Refunded: required; Delivered: shown when set
	Reason    string            // Refunded: why (an order error code); said when the catalog explains it
	// Translated: a transcription order delivered as an English translation; Delivered says
	// so (and says "transcript" otherwise). Ignored for text-to-speech.
	Translated bool
	Purchase   Purchase // what was bought and paid: the receipt (Delivered) or the refund (Refunded)
}

// Purchase is what an order bought and what it cost. Zero fields are left out of the
// receipt; a zero Currency leaves out the amount.
type Purchase struct {
	Format     string // as ordered: mp3, srt, verbose_json…
	Voice      string // text-to-speech
	Characters int64  // text-to-speech
	Seconds    int64  // transcriptions: the billed length
	Amount     int64  // minor units
	Currency   string // ISO 4217, any case
}

// Render writes the e-mail of the given kind in the given interface language (resolved by
// texts.Locale). The returned message has Subject, Text and HTML set; the caller fills To.
func Render(kind Kind, locale string, d Data) (providers.Message, error) {
	tr := texts.In(locale)
	service, ok := tr.Lookup("service." + string(d.Service))
	if !ok {
		return providers.Message{}, fmt.Errorf("rendering %s mail: unknown service %q", kind, d.Service)
	}
	fill := func(key string) string {
		return strings.NewReplacer("{service}", service, "{ref}", d.OrderRef).Replace(tr.Get(key))
	}

	v := view{Lang: tr.Tag(), Dir: tr.Dir(), Greeting: tr.Get("greeting"), Signature: tr.Get("signature"), Automated: tr.Get("automated")}
	switch kind {
	case Delivered:
		if err := checkLink(d.Link); err != nil {
			return providers.Message{}, fmt.Errorf("rendering %s mail: %w", kind, err)
		}
		if d.ExpiresAt.IsZero() {
			return providers.Message{}, fmt.Errorf("rendering %s mail: no expiry time", kind)
		}
		v.Subject = fill("delivered.subject")
		date := formatDate(tr, d.ExpiresAt)
		v.Blocks = []block{{Text: fill("delivered.intro")}}
		switch {
		case d.Service == providers.TTS:
		case d.Translated:
			v.Blocks = append(v.Blocks, block{Text: tr.Get("delivered.what.translation")})
		default:
			v.Blocks = append(v.Blocks, block{Text: tr.Get("delivered.what.transcript")})
		}
		v.Blocks = append(v.Blocks,
			block{Text: fill("delivered.link"), Link: d.Link, Button: tr.Get("delivered.button"), Fallback: tr.Get("link_fallback")},
			block{Text: strings.ReplaceAll(tr.Get("delivered.expiry"), "{date}", date)},
			block{Text: tr.Get("receipt.heading"), Lines: receiptLines(tr, service, d.Purchase, "receipt.amount")},
			block{Text: tr.Get("delivered.warning"), Warn: true},
		)
		if d.OrderRef != "" {
			v.Blocks = append(v.Blocks, block{Text: fill("reference")})
		}
		v.Blocks = append(v.Blocks, block{Text: tr.Get("delivered.thanks")})
	case Refunded:
		if strings.TrimSpace(d.OrderRef) == "" {
			return providers.Message{}, fmt.Errorf("rendering %s mail: no order reference", kind)
		}
		v.Subject = fill("refunded.subject")
		v.Blocks = []block{{Text: fill("refunded.intro")}}
		if why, ok := tr.Lookup("refunded.reason." + d.Reason); ok {
			v.Blocks = append(v.Blocks, block{Text: why})
		} else if d.Reason != "" {
			v.Blocks = append(v.Blocks, block{Text: tr.Get("refunded.reason.other")})
		}
		v.Blocks = append(v.Blocks,
			block{Text: tr.Get("refunded.refund")},
			block{Text: tr.Get("receipt.heading"), Lines: receiptLines(tr, service, d.Purchase, "refunded.amount")},
			block{Text: tr.Get("refunded.kept")},
			block{Text: fill("reference")},
			block{Text: tr.Get("refunded.apology")},
		)
	default:
		return providers.Message{}, fmt.Errorf("rendering mail: unknown kind %s", kind)
	}

	var html bytes.Buffer
	if err := htmlTemplate.Execute(&html, v); err != nil {
		return providers.Message{}, fmt.Errorf("rendering %s mail (%s) HTML: %w", kind, tr.Code(), err)
	}
	return providers.Message{Subject: v.Subject, Text: v.text(), HTML: html.String()}, nil
}

// view is one e-mail laid out as blocks, shared by the plain-text and HTML renderings.
type view struct {
	Lang, Dir string
	Subject   string
	Greeting  string
	Blocks    []block
	Signature string
	Automated string
}

// block is a paragraph; with Link it is followed by the link (a button in HTML), with Warn
// it is highlighted.
type block struct {
	Text     string
	Link     string
	Button   string
	Fallback string
	Warn     bool
	Lines    []string // a list under the text (the receipt)
}

// text is the plain-text part: readable on its own, link on a line of its own so mail
// clients make it clickable.
func (v view) text() string {
	var b strings.Builder
	b.WriteString(v.Greeting + "\n\n")
	for _, bl := range v.Blocks {
		b.WriteString(bl.Text + "\n")
		for _, l := range bl.Lines {
			b.WriteString("  " + l + "\n")
		}
		if bl.Link != "" {
			b.WriteString(bl.Link + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString(v.Signature + "\n\n-- \n" + v.Automated + "\n")
	return b.String()
}

// htmlTemplate is parsed once and only executed afterwards. Inline styles only: most mail
// clients drop <style> blocks. Logical properties keep the layout right for Arabic.
var htmlTemplate = template.Must(template.New("mail").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}" dir="{{.Dir}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Subject}}</title>
</head>
<body dir="{{.Dir}}" style="margin:0;padding:0;background-color:#f4f4f5;">
<div dir="{{.Dir}}" style="max-width:560px;margin:0 auto;padding:24px;background-color:#ffffff;color:#18181b;font-family:-apple-system,'Segoe UI',Roboto,'Noto Sans','Noto Sans Arabic','Noto Sans CJK JP','Noto Sans CJK SC',Arial,sans-serif;font-size:16px;line-height:1.6;">
<p style="margin:0 0 16px;font-size:22px;font-weight:bold;color:#4338ca;">Parla</p>
<p style="margin:0 0 16px;">{{.Greeting}}</p>
{{- range .Blocks}}
{{- if .Link}}
<p style="margin:0 0 12px;">{{.Text}}</p>
<p style="margin:0 0 12px;"><a href="{{.Link}}" style="display:inline-block;padding:12px 20px;background-color:#4338ca;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:bold;">{{.Button}}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#52525b;">{{.Fallback}}<br><a href="{{.Link}}" dir="ltr" style="color:#4338ca;word-break:break-all;">{{.Link}}</a></p>
{{- else if .Lines}}
<p style="margin:0 0 4px;font-weight:bold;">{{.Text}}</p>
<ul style="margin:0 0 16px;padding-inline-start:20px;">{{range .Lines}}<li>{{.}}</li>{{end}}</ul>
{{- else if .Warn}}
<p style="margin:0 0 16px;padding:12px 16px;background-color:#fef3c7;border-inline-start:4px solid #f59e0b;color:#78350f;font-weight:bold;">{{.Text}}</p>
{{- else}}
<p style="margin:0 0 16px;">{{.Text}}</p>
{{- end}}
{{- end}}
<p style="margin:24px 0 0;">{{.Signature}}</p>
<p style="margin:24px 0 0;font-size:12px;color:#71717a;">{{.Automated}}</p>
</div>
</body>
</html>
`))

// formatDate writes t (in UTC) the way the language writes dates, with month names from
// the catalog.
func formatDate(tr texts.Lang, t time.Time) string {
	t = t.UTC()
	return strings.NewReplacer(
		"{year}", strconv.Itoa(t.Year()),
		"{month}", tr.Get("month."+strconv.Itoa(int(t.Month()))),
		"{day}", strconv.Itoa(t.Day()),
		"{time}", t.Format("15:04"),
	).Replace(tr.Get("date.format"))
}

// checkLink accepts only absolute http(s) URLs: anything else would be a broken or
// dangerous link in the mail.
func checkLink(link string) error {
	if link == "" {
		return errors.New("no download link")
	}
	// The link carries a secret token: errors describe it without quoting it.
	u, err := url.Parse(link)
	if err != nil {
		return errors.New("download link is not a valid URL")
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("download link is not an absolute http(s) URL")
	}
	if strings.ContainsAny(link, "\r\n \t") {
		return errors.New("download link contains white space")
	}
	return nil
}

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
