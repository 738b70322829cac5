package texts

import "testing"

// PluralForms returns the plural categories whose forms the language's counted texts give
// (see Count), in CLDR's order.
func PluralForms(locale string) []string {
	return append([]string(nil), pluralForms[Locale(locale)]...)
}

// CLDR's categories for whole numbers, as Intl.PluralRules gives them in the browser.
func TestPluralCategory(t *testing.T) {
	for _, c := range []struct {
		locale string
		n      int64
		want   string
	}{
		{"en", 0, "other"}, {"en", 1, "one"}, {"en", 2, "other"}, {"en", 11, "other"}, {"en", -1, "one"},
		{"es", 0, "other"}, {"es", 1, "one"}, {"es", 9, "other"}, {"es", 1_000_000, "many"}, {"es", 2_000_000, "many"},
		{"es", 1_000_001, "other"},
		{"ru", 1, "one"}, {"ru", 21, "one"}, {"ru", 101, "one"}, {"ru", 11, "many"}, {"ru", 111, "many"},
		{"ru", 2, "few"}, {"ru", 4, "few"}, {"ru", 22, "few"}, {"ru", 12, "many"}, {"ru", 14, "many"},
		{"ru", 0, "many"}, {"ru", 5, "many"}, {"ru", 9, "many"}, {"ru", 20, "many"},
		{"ar", 0, "zero"}, {"ar", 1, "one"}, {"ar", 2, "two"}, {"ar", 3, "few"}, {"ar", 9, "few"}, {"ar", 10, "few"},
		{"ar", 11, "many"}, {"ar", 23, "many"}, {"ar", 99, "many"}, {"ar", 100, "other"}, {"ar", 101, "other"},
		{"ar", 102, "other"}, {"ar", 103, "few"}, {"ar", 111, "many"},
		{"zh", 1, "other"}, {"jp", 1, "other"}, {"ja", 2, "other"}, {"xx", 1, "one"},
	} {
		if got := PluralCategory(c.locale, c.n); got != c.want {
			t.Errorf("PluralCategory(%s, %d) = %s, want %s", c.locale, c.n, got, c.want)
		}
	}
}

// The case: nine days are أيام in Arabic, not يوم; Russian's units stay short.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		locale, key string
		n           int64
		want        string
	}{
		{"ar", "page.days", 9, "9 أيام"}, {"ar", "page.days", 11, "11 يومًا"}, {"ar", "page.days", 2, "2 يومان"},
		{"ar", "page.hours", 23, "23 ساعة"}, {"ar", "page.minutes", 5, "5 دقائق"},
		{"ru", "page.days", 9, "9 дн."}, {"en", "page.minutes", 1, "1 min"}, {"jp", "page.hours", 3, "3時間"},
	} {
		if got := In(c.locale).Count(c.key, c.n); got != c.want {
			t.Errorf("%s %s(%d) = %q, want %q", c.locale, c.key, c.n, got, c.want)
		}
	}
}
