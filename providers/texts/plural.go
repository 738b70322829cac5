package texts

import "strings"

// Counted words. A text that counts something comes in the plural forms of its language,
// under key_{category} as i18next names them in webui/src/locales (page.days_one,
// page.days_few…), and Count picks the form by CLDR's plural rules, as the browser's
// Intl.PluralRules does: Arabic says 9 أيام but 11 يومًا, Russian 1 день, 2 дня, 5 дней.

// pluralForms are, per language, the categories CLDR gives whole numbers, and other (the
// form a missing one falls back to). Japanese and Chinese do not inflect for number.
var pluralForms = map[string][]string{
	"en": {"one", "other"},
	"es": {"one", "many", "other"},
	"ru": {"one", "few", "many", "other"},
	"ar": {"zero", "one", "two", "few", "many", "other"},
	"zh": {"other"},
	"jp": {"other"},
}

// PluralCategory returns CLDR's plural category of the whole number n in the language:
// zero, one, two, few, many or other (CLDR 44's rules for integers; the sign is ignored).
func PluralCategory(locale string, n int64) string {
	if n < 0 {
		n = -n
	}
	switch Locale(locale) {
	case "en":
		if n == 1 {
			return "one"
		}
	case "es":
		switch {
		case n == 1:
			return "one"
		case n != 0 && n%1_000_000 == 0: // un millón de días
			return "many"
		}
	case "ru":
		switch d, dd := n%10, n%100; {
		case d == 1 && dd != 11:
			return "one"
		case d >= 2 && d <= 4 && (dd < 12 || dd > 14):
			return "few"
		default:
			return "many"
		}
	case "ar":
		switch dd := n % 100; {
		case n == 0:
			return "zero"
		case n == 1:
			return "one"
		case n == 2:
			return "two"
		case dd >= 3 && dd <= 10:
			return "few"
		case dd >= 11:
			return "many"
		}
	}
	return "other"
}

// Count returns key's form for n (key_{category}, else key_other) with {n} written the
// language's way.
func (l Lang) Count(key string, n int64) string {
	t, ok := l.texts[key+"_"+PluralCategory(l.code, n)]
	if !ok {
		t = l.texts[key+"_other"]
	}
	return strings.ReplaceAll(t, "{n}", FormatCount(l.code, n))
}

// Forms returns every form of a counted key by category, for a page's script to choose
// from with the browser's Intl.PluralRules (the link page's countdown).
func (l Lang) Forms(key string) map[string]string {
	out := map[string]string{}
	for _, c := range pluralForms[l.code] {
		out[c] = l.texts[key+"_"+c]
	}
	return out
}
