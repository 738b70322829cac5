package mail

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"parla/providers"
	"parla/providers/texts"
)

var tags = regexp.MustCompile(`<[^>]*>`)

// TestNoEnglishLeft renders every mail in every other language and looks for English words
// (taken from the English strings) once the link, the order reference and the names that stay
// as they are (Parla, UTC) are taken out.
func TestNoEnglishLeft(t *testing.T) {
	const link = "https://parla.example/d/abc123"
	const ref = "ord_7Q"
	englishWords := map[string]bool{}
	for _, m := range englishLetters(t) {
		for _, w := range strings.FieldsFunc(strings.ToLower(m.Subject+"\n"+m.Text), notLetter) {
			if len(w) >= 3 {
				englishWords[w] = true
			}
		}
	}
	for _, w := range []string{"parla", "utc", "audio"} { // audio is Spanish too
		delete(englishWords, w)
	}
	latinScript := map[string]bool{"es": true}

	for _, locale := range texts.Locales() {
		if locale == "en" {
			continue
		}
		for _, kind := range []Kind{Delivered, Refunded} {
			for _, service := range []providers.Service{providers.TTS, providers.STT, providers.VTT} {
				t.Run(locale+"/"+kind.String()+"/"+string(service), func(t *testing.T) {
					m, err := Render(kind, locale, Data{Service: service, Link: link, ExpiresAt: time.Now().Add(240 * time.Hour), OrderRef: ref})
					if err != nil {
						t.Fatal(err)
					}
					// The HTML's visible text too: the button label only lives there.
					visible := html.UnescapeString(tags.ReplaceAllString(m.HTML, " "))
					body := strings.NewReplacer(link, "", ref, "", "Parla", "", "UTC", "").Replace(m.Subject + "\n" + m.Text + "\n" + visible)
					for _, w := range strings.FieldsFunc(strings.ToLower(body), notLetter) {
						if englishWords[w] {
							t.Errorf("English word %q left in:\n%s", w, body)
						}
					}
					if !latinScript[locale] {
						if i := strings.IndexFunc(body, func(r rune) bool { return r < unicode.MaxASCII && unicode.IsLetter(r) }); i >= 0 {
							t.Errorf("Latin letters left at %q in:\n%s", body[i:min(len(body), i+20)], body)
						}
					}
				})
			}
		}
	}
}

func notLetter(r rune) bool { return !unicode.IsLetter(r) }

// refundReasons are the reasons a refund letter explains (refunded.reason.*), "other" for
// any reason it does not name.
var refundReasons = []string{"source_changed", "source_gone", "upload_missing", "payment_late", "upload_taken",
	"amount_mismatch", "no_speech", "translation_unavailable", "engine_refused", "production_failed", "other"}

// englishLetters are every letter in English: each kind for each service, a refund for
// each reason, translated or not.
func englishLetters(t *testing.T) []providers.Message {
	var out []providers.Message
	for _, service := range []providers.Service{providers.TTS, providers.STT, providers.VTT} {
		for _, translated := range []bool{false, true} {
			m, err := Render(Delivered, "en", Data{Service: service, Link: "https://parla.example/d/x",
				ExpiresAt: time.Now(), OrderRef: "r", Translated: translated})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		for _, reason := range refundReasons {
			m, err := Render(Refunded, "en", Data{Service: service, OrderRef: "r", Reason: reason})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

func TestRenderDelivered(t *testing.T) {
	expires := time.Date(2026, time.March, 12, 14, 5, 0, 0, time.UTC)
	tests := []struct {
		locale, service, date, lang, dir string
	}{
		{"en", "audio transcription", "March 12, 2026 at 14:05 UTC", "en", "ltr"},
		{"jp", "音声の文字起こし", "2026年3月12日 14:05（UTC）", "ja", "ltr"},
		{"es", "transcripción de audio", "12 de marzo de 2026, a las 14:05 (UTC)", "es", "ltr"},
		{"ru", "Аудио в текст", "12 марта 2026 г., 14:05 (UTC)", "ru", "ltr"},
		{"zh", "音频转文字", "2026年3月12日 14:05（UTC）", "zh-Hans", "ltr"},
		{"ar", "تحويل الصوت إلى نص", "12 مارس 2026، الساعة 14:05 (UTC)", "ar", "rtl"},
	}
	for _, tt := range tests {
		t.Run(tt.locale, func(t *testing.T) {
			m, err := Render(Delivered, tt.locale, Data{Service: providers.STT, Link: "https://parla.example/d/tok", ExpiresAt: expires})
			if err != nil {
				t.Fatal(err)
			}
			if m.To != "" {
				t.Errorf("Render set To = %q", m.To)
			}
			for part, s := range map[string]string{"subject": m.Subject, "text": m.Text, "html": m.HTML} {
				if !strings.Contains(s, tt.service) {
					t.Errorf("%s lacks the service name %q:\n%s", part, tt.service, s)
				}
			}
			for part, s := range map[string]string{"text": m.Text, "html": m.HTML} {
				for _, want := range []string{tt.date, "https://parla.example/d/tok", "10"} {
					if !strings.Contains(s, want) {
						t.Errorf("%s lacks %q:\n%s", part, want, s)
					}
				}
			}
			if want := `<html lang="` + tt.lang + `" dir="` + tt.dir + `">`; !strings.Contains(m.HTML, want) {
				t.Errorf("HTML lacks %s", want)
			}
			if strings.Contains(m.Subject, "\n") || strings.Contains(m.Subject, "\r") {
				t.Errorf("subject has a line break: %q", m.Subject)
			}
		})
	}
}

func TestRenderRefunded(t *testing.T) {
	for _, locale := range texts.Locales() {
		t.Run(locale, func(t *testing.T) {
			m, err := Render(Refunded, locale, Data{Service: providers.TTS, OrderRef: "ord_42"})
			if err != nil {
				t.Fatal(err)
			}
			tr := texts.In(locale)
			for _, want := range []string{tr.Get("refunded.refund"), tr.Get("refunded.apology"), "ord_42", tr.Get("service.tts")} {
				if !strings.Contains(m.Text, want) || !strings.Contains(m.HTML, want) {
					t.Errorf("mail lacks %q", want)
				}
			}
			if strings.Contains(m.Text, "http") {
				t.Errorf("refund mail carries a link:\n%s", m.Text)
			}
		})
	}
}

func TestRenderEscapesHTML(t *testing.T) {
	ref := `<script>alert("x")</script>&`
	link := `https://parla.example/d/tok?a=1&b="><script>`
	m, err := Render(Delivered, "en", Data{Service: providers.TTS, Link: link, ExpiresAt: time.Now(), OrderRef: ref})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.HTML, "<script>") {
		t.Errorf("HTML not escaped:\n%s", m.HTML)
	}
	if !strings.Contains(m.HTML, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;") {
		t.Errorf("escaped reference missing:\n%s", m.HTML)
	}
	if !strings.Contains(m.Text, ref) || !strings.Contains(m.Text, link) {
		t.Errorf("plain text should carry the raw values:\n%s", m.Text)
	}
}

func TestRenderErrors(t *testing.T) {
	ok := Data{Service: providers.VTT, Link: "https://parla.example/d/x", ExpiresAt: time.Now(), OrderRef: "r"}
	tests := []struct {
		name string
		kind Kind
		data func(d Data) Data
	}{
		{"unknown service", Delivered, func(d Data) Data { d.Service = "ocr"; return d }},
		{"no link", Delivered, func(d Data) Data { d.Link = ""; return d }},
		{"relative link", Delivered, func(d Data) Data { d.Link = "/d/x"; return d }},
		{"javascript link", Delivered, func(d Data) Data { d.Link = "javascript:alert(1)"; return d }},
		{"link with line break", Delivered, func(d Data) Data { d.Link = "https://parla.example/d/x\r\nBcc: a@b.c"; return d }},
		{"no expiry", Delivered, func(d Data) Data { d.ExpiresAt = time.Time{}; return d }},
		{"refund without reference", Refunded, func(d Data) Data { d.OrderRef = " "; return d }},
		{"unknown kind", Kind(99), func(d Data) Data { return d }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Render(tt.kind, "en", tt.data(ok)); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := Render(Delivered, "en", ok); err != nil {
		t.Errorf("valid data refused: %v", err)
	}
}

// An unknown language gets the English letter (texts.Locale's rule, tested there).
func TestLocale(t *testing.T) {
	m, err := Render(Refunded, "fr", Data{Service: providers.TTS, OrderRef: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, texts.In("en").Get("refunded.refund")) {
		t.Errorf("unknown locale did not fall back to en:\n%s", m.Text)
	}
}

func TestFormatDate(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		locale string
		at     time.Time
		want   string
	}{
		{"en", time.Date(2027, time.January, 5, 9, 30, 0, 0, time.UTC), "January 5, 2027 at 09:30 UTC"},
		{"en", time.Date(2027, time.January, 1, 0, 30, 0, 0, paris), "December 31, 2026 at 23:30 UTC"},
		{"jp", time.Date(2026, time.December, 31, 23, 59, 0, 0, time.UTC), "2026年12月31日 23:59（UTC）"},
		{"es", time.Date(2026, time.May, 1, 8, 0, 0, 0, time.UTC), "1 de mayo de 2026, a las 08:00 (UTC)"},
		{"ru", time.Date(2026, time.August, 20, 18, 45, 0, 0, time.UTC), "20 августа 2026 г., 18:45 (UTC)"},
		{"zh", time.Date(2026, time.October, 9, 7, 5, 0, 0, time.UTC), "2026年10月9日 07:05（UTC）"},
		{"ar", time.Date(2026, time.June, 15, 12, 0, 0, 0, time.UTC), "15 يونيو 2026، الساعة 12:00 (UTC)"},
	}
	for _, tt := range tests {
		t.Run(tt.locale+"/"+tt.want, func(t *testing.T) {
			if got := formatDate(texts.In(tt.locale), tt.at); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	// Every month name is used: twelve distinct names per locale.
	for _, locale := range texts.Locales() {
		var names []string
		for m := time.January; m <= time.December; m++ {
			names = append(names, formatDate(texts.In(locale), time.Date(2026, m, 1, 0, 0, 0, 0, time.UTC)))
		}
		slices.Sort(names)
		if len(slices.Compact(names)) != 12 {
			t.Errorf("%s: month names not distinct", locale)
		}
	}
}

func TestRefundedSaysWhy(t *testing.T) {
	for _, lng := range texts.Locales() {
		for _, reason := range []string{"source_changed", "source_gone", "upload_missing", "payment_late", "upload_taken", "amount_mismatch", "no_speech", "translation_unavailable", "engine_refused"} {
			m, err := Render(Refunded, lng, Data{Service: "vtt", OrderRef: "ord_1", Reason: reason})
			if err != nil {
				t.Fatal(err)
			}
			why := texts.In(lng).Get("refunded.reason." + reason)
			if why == "" || !strings.Contains(m.Text, why) {
				t.Errorf("%s %s: the message does not say why:\n%s", lng, reason, m.Text)
			}
		}
		plain, _ := Render(Refunded, lng, Data{Service: "tts", OrderRef: "ord_2", Reason: "production_failed"})
		for _, reason := range refundReasons {
			key := "refunded.reason." + reason
			said := strings.Contains(plain.Text, texts.In(lng).Get(key))
			if said != (key == "refunded.reason.production_failed") {
				t.Errorf("%s: a failed production is explained as %s: %v", lng, key, said)
			}
		}
		other, _ := Render(Refunded, lng, Data{Service: "tts", OrderRef: "ord_3", Reason: "card_declined"})
		if !strings.Contains(other.Text, texts.In(lng).Get("refunded.reason.other")) {
			t.Errorf("%s: an unlisted reason is not explained:\n%s", lng, other.Text)
		}
	}
}

// A transcription's delivery says what the file holds: a transcript, or the English
// translation the visitor asked for; a text-to-speech delivery says neither.
func TestDeliveredSaysTranscriptOrTranslation(t *testing.T) {
	expires := time.Now().Add(240 * time.Hour)
	for _, locale := range texts.Locales() {
		tr := texts.In(locale)
		for _, c := range []struct {
			service    providers.Service
			translated bool
			want, not  string
		}{
			{providers.STT, false, "delivered.what.transcript", "delivered.what.translation"},
			{providers.VTT, true, "delivered.what.translation", "delivered.what.transcript"},
			{providers.TTS, true, "", "delivered.what.translation"},
		} {
			m, err := Render(Delivered, locale, Data{Service: c.service, Link: "https://parla.example/d/x", ExpiresAt: expires, Translated: c.translated})
			if err != nil {
				t.Fatal(err)
			}
			if c.want != "" && !strings.Contains(m.Text, tr.Get(c.want)) {
				t.Errorf("%s %s (translated %v) lacks %q:\n%s", locale, c.service, c.translated, c.want, m.Text)
			}
			if strings.Contains(m.Text, tr.Get(c.not)) || (c.service == providers.TTS && strings.Contains(m.Text, tr.Get("delivered.what.transcript"))) {
				t.Errorf("%s %s (translated %v) says %q:\n%s", locale, c.service, c.translated, c.not, m.Text)
			}
		}
	}
}
