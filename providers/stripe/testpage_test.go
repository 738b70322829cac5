package stripe

import (
	"bytes"
	"strings"
	"testing"
)

func TestRenderPage(t *testing.T) {
	base := TestSession{
		ID: "cs_test_x", URL: publicURL + "/checkout/test/cs_test_x",
		Name: `Text <script>alert(1)</script>`, Amount: 99, Currency: "eur",
		SuccessURL: publicURL + "/payment/success?session_id=cs_test_x", CancelURL: publicURL + "/tts",
	}
	cases := []struct {
		status      string
		want, avoid []string
	}{
		{"open", []string{
			"TEST PAYMENT — no real card is charged", "€0.99",
			`action="` + publicURL + `/checkout/test/cs_test_x/pay"`,
			`action="` + publicURL + `/checkout/test/cs_test_x/cancel"`,
			"&lt;script&gt;",
			`<a href="/terms"`, `<a href="/refunds"`,
		}, []string{"<script>"}},
		{"complete", []string{"TEST PAYMENT", "is paid", `href="` + publicURL + `/payment/success?session_id=cs_test_x"`},
			[]string{"/pay\""}},
		{"expired", []string{"TEST PAYMENT", "expired", `href="` + publicURL + `/tts"`}, []string{"/pay\""}},
	}
	for _, tc := range cases {
		t.Run(tc.status, func(t *testing.T) {
			s := base
			s.Status = tc.status
			var b bytes.Buffer
			if err := RenderPage(&b, s); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(page, a) {
					t.Errorf("page contains %q", a)
				}
			}
		})
	}
}

// The amounts are written as the form and the receipt write them (texts.FormatAmount):
// 0,99 € in Spanish and Russian, €0.99 in English, with no-break spaces.
func TestRenderPageWritesAmountsInTheVisitorsFormat(t *testing.T) {
	for locale, want := range map[string]string{"es": "0,99\u00a0€", "ru": "0,99\u00a0€", "en": "€0.99", "ar": "0.99\u00a0€", "jp": "€0.99"} {
		s := TestSession{ID: "cs_test_z", URL: publicURL + "/checkout/test/cs_test_z", Name: "x", Amount: 99, Currency: "eur",
			Status: "open", Locale: locale}
		var b bytes.Buffer
		if err := RenderPage(&b, s); err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{`data-testid="amount">` + want + "<", "<bdi>" + want + "</bdi>", "— " + want + "</title>"} {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s page lacks %q", locale, w)
			}
		}
	}
}

// A checkout that a newer one replaced (a second tab) says so in the visitor's language,
// with the way back to the form; one that ran out of time says it expired. The e-mail
// address is kept one left-to-right piece.
func TestRenderPageOfAReplacedCheckout(t *testing.T) {
	s := TestSession{ID: "cs_test_r", URL: publicURL + "/checkout/test/cs_test_r", Name: "x", Amount: 99, Currency: "eur",
		Status: "expired", ClosedEarly: true, Locale: "es", Email: "ana-maria@example-mail.com", CancelURL: publicURL + "/es/tts"}
	var b bytes.Buffer
	if err := RenderPage(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"otra pestaña", `href="` + publicURL + `/es/tts">Volver</a>`,
		`<bdi class="email" dir="ltr" data-testid="email">ana-maria@example-mail.com</bdi>`} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if strings.Contains(b.String(), "/pay") || strings.Contains(b.String(), "ha caducado") {
		t.Errorf("a replaced checkout offers to pay or says it ran out of time:\n%s", b.String())
	}
}

func TestRenderPageInTheOrdersLanguage(t *testing.T) {
	s := TestSession{ID: "cs_test_y", URL: publicURL + "/checkout/test/cs_test_y", Name: "Озвучивание текста",
		Amount: 99, Currency: "eur", Status: "open", Email: "a@example.com"}
	for locale, want := range map[string][]string{
		"ru": {`<html lang="ru" dir="ltr">`, "ТЕСТОВАЯ ОПЛАТА", ">Оплатить <bdi>0,99\u00a0€</bdi>", ">Отмена<", "Квитанция на адрес", `href="/terms" target="_blank" rel="noopener">условия использования</a>`},
		"ar": {`<html lang="ar" dir="rtl">`, "دفع تجريبي", ">ادفع <bdi>", ">إلغاء<"},
		"jp": {`<html lang="ja" dir="ltr">`, "テスト決済", ">支払う <bdi>"},
		"xx": {`<html lang="en" dir="ltr">`, "TEST PAYMENT", ">Pay <bdi>€0.99</bdi>"},
	} {
		s.Locale = locale
		var b bytes.Buffer
		if err := RenderPage(&b, s); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s page lacks %q", locale, w)
			}
		}
		if locale != "xx" && strings.Contains(b.String(), "TEST PAYMENT") {
			t.Errorf("%s page is in English", locale)
		}
	}
}
