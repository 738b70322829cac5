package texts

import "testing"

// The amounts are written the way each language writes money; Spanish is the case.
func TestFormatAmount(t *testing.T) {
	for _, c := range []struct {
		locale   string
		minor    int64
		currency string
		want     string
	}{
		{"es", 99, "eur", "0,99\u00a0€"},
		{"es", 123456, "eur", "1234,56\u00a0€"}, // CLDR: Spanish groups from five digits
		{"es", 1234500, "EUR", "12.345,00\u00a0€"},
		{"en", 99, "eur", "€0.99"},
		{"en", 123456, "usd", "$1,234.56"},
		{"ru", 123456, "eur", "1\u00a0234,56\u00a0€"},
		{"jp", 500, "jpy", "¥500"},
		{"zh", 5, "eur", "€0.05"},
		{"ar", 99, "eur", "0.99\u00a0€"},
		{"en", 99, "sek", "SEK\u00a00.99"},
		{"en", 500, "krw", "KRW\u00a0500"}, // Stripe counts won in whole units
	} {
		if got := FormatAmount(c.locale, c.minor, c.currency); got != c.want {
			t.Errorf("FormatAmount(%s, %d, %s) = %q, want %q", c.locale, c.minor, c.currency, got, c.want)
		}
	}
}
