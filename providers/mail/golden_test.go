package mail

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/texts"
)

var update = flag.Bool("update", false, "rewrite the golden letters in testdata/letters")

// The receipt and the refund letter in every language are compared whole with the golden
// files in testdata/letters (go test ./providers/mail -run Golden -update rewrites them
// after a deliberate change; read the diff).
func TestLettersGolden(t *testing.T) {
	expires := time.Date(2026, time.December, 4, 9, 30, 0, 0, time.UTC)
	letters := []struct {
		name string
		kind Kind
		data Data
	}{
		{"receipt-tts", Delivered, Data{Service: providers.TTS, Link: "https://parla.example/r/tok3n", ExpiresAt: expires,
			OrderRef: "ord_tts", Purchase: Purchase{Format: "mp3", Voice: "alloy", Characters: 12345, Amount: 99, Currency: "eur"}}},
		{"receipt-vtt", Delivered, Data{Service: providers.VTT, Link: "https://parla.example/r/tok3n", ExpiresAt: expires,
			OrderRef: "ord_vtt", Translated: true, Purchase: Purchase{Format: "srt", Seconds: 3725, Amount: 1250, Currency: "eur"}}},
		{"refund-sst", Refunded, Data{Service: providers.STT, OrderRef: "ord_sst", Reason: "upload_missing",
			Purchase: Purchase{Format: "vtt", Seconds: 65, Amount: 99, Currency: "eur"}}},
	}
	for _, locale := range texts.Locales() {
		for _, l := range letters {
			t.Run(locale+"/"+l.name, func(t *testing.T) {
				m, err := Render(l.kind, locale, l.data)
				if err != nil {
					t.Fatal(err)
				}
				got := "Subject: " + m.Subject + "\n\n" + m.Text + "\n-----HTML-----\n" + m.HTML
				path := filepath.Join("testdata", "letters", locale+"-"+l.name+".golden")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to write it)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs from the golden file:\n%s", path, got)
				}
			})
		}
	}
}

// Lengths are written as players show them.
func TestFormatDuration(t *testing.T) {
	if got := FormatDuration(3725); got != "1:02:05" {
		t.Errorf("FormatDuration(3725) = %q", got)
	}
	if got := FormatDuration(65); got != "1:05" {
		t.Errorf("FormatDuration(65) = %q", got)
	}
}

// Every receipt says what was bought and what it cost, in the plain-text part too, and the
// refund letter says the amount and that nothing was kept.
func TestReceiptInPlainText(t *testing.T) {
	for _, locale := range texts.Locales() {
		tr := texts.In(locale)
		p := Purchase{Format: "wav", Voice: "nova", Characters: 42, Amount: 99, Currency: "eur"}
		m, err := Render(Delivered, locale, Data{Service: providers.TTS, Link: "https://parla.example/r/x",
			ExpiresAt: time.Now().Add(time.Hour), Purchase: p})
		if err != nil {
			t.Fatal(err)
		}
		amount := texts.FormatAmount(locale, 99, "eur")
		for _, want := range []string{tr.Get("receipt.heading"), "WAV", "Nova", "42", amount} {
			if !strings.Contains(m.Text, want) || !strings.Contains(m.HTML, want) {
				t.Errorf("%s: receipt lacks %q:\n%s", locale, want, m.Text)
			}
		}
		r, err := Render(Refunded, locale, Data{Service: providers.TTS, OrderRef: "o", Reason: "production_failed", Purchase: p})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{strings.ReplaceAll(tr.Get("refunded.amount"), "{amount}", amount), tr.Get("refunded.kept"),
			tr.Get("refunded.reason.production_failed")} {
			if !strings.Contains(r.Text, want) {
				t.Errorf("%s: refund letter lacks %q:\n%s", locale, want, r.Text)
			}
		}
	}
}
