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
			"TEST PAYMENT — no real card is charged", "0.99 €",
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

func TestFormatAmount(t *testing.T) {
	for _, tc := range []struct {
		amount   int64
		currency string
		want     string
	}{
		{99, "eur", "0.99 €"},
		{198, "EUR", "1.98 €"},
		{12345, "usd", "123.45 $"},
		{5, "eur", "0.05 €"},
		{500, "jpy", "500 ¥"},
		{150, "chf", "1.50 CHF"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := FormatAmount(tc.amount, tc.currency); got != tc.want {
				t.Errorf("FormatAmount(%d, %q) = %q, want %q", tc.amount, tc.currency, got, tc.want)
			}
		})
	}
}

func TestRenderPageInTheOrdersLanguage(t *testing.T) {
	s := TestSession{ID: "cs_test_y", URL: publicURL + "/checkout/test/cs_test_y", Name: "Озвучивание текста",
		Amount: 99, Currency: "eur", Status: "open", Email: "a@example.com"}
	for locale, want := range map[string][]string{
		"ru": {`<html lang="ru" dir="ltr">`, "ТЕСТОВАЯ ОПЛАТА", ">Оплатить <bdi>0.99 €</bdi>", ">Отмена<", "Квитанция на адрес", `href="/terms" target="_blank" rel="noopener">условия использования</a>`},
		"ar": {`<html lang="ar" dir="rtl">`, "دفع تجريبي", ">ادفع <bdi>", ">إلغاء<"},
		"jp": {`<html lang="ja" dir="ltr">`, "テスト決済", ">支払う <bdi>"},
		"xx": {`<html lang="en" dir="ltr">`, "TEST PAYMENT", ">Pay <bdi>0.99 €</bdi>"},
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
