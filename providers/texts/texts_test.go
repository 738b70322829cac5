package texts

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var placeholders = regexp.MustCompile(`\{[a-z]+\}`)

// sameInEnglish are the keys whose text may equal English's in another language: the
// countdown and its units (Spanish writes d, h, min too) and the full stop ending the terms
// line. A counted key is named without its plural suffix.
var sameInEnglish = map[string]bool{"page.left": true, "page.days": true, "page.hours": true, "page.minutes": true,
	"checkout.terms_post": true}

var pluralSuffix = regexp.MustCompile(`_(zero|one|two|few|many|other)$`)

// expectedKeys are English's keys as lng must hold them, each with the English text its
// own is compared with: a counted key in lng's plural forms, each against English's other.
func expectedKeys(lng string) map[string]string {
	en := catalog["en"]
	out := map[string]string{}
	for key, text := range en {
		base := pluralSuffix.ReplaceAllString(key, "")
		if base == key {
			out[key] = text
			continue
		}
		for _, form := range PluralForms(lng) {
			out[base+"_"+form] = en[base+"_other"]
		}
	}
	return out
}

// Every language has every key of English and no other (a counted key in exactly its own
// plural forms), none empty, none left in English (but for sameInEnglish), with the same
// placeholders as English.
func TestCatalogComplete(t *testing.T) {
	if len(catalog) != len(Locales()) {
		t.Errorf("catalog has %d languages, Locales() lists %d", len(catalog), len(Locales()))
	}
	for _, lng := range Locales() {
		t.Run(lng, func(t *testing.T) {
			tr, ok := catalog[lng]
			if !ok {
				t.Fatalf("no texts for %s", lng)
			}
			want := expectedKeys(lng)
			for key, enText := range want {
				text, ok := tr[key]
				switch {
				case !ok:
					t.Errorf("%s lacks key %q", lng, key)
				case strings.TrimSpace(text) == "":
					t.Errorf("%s has an empty %q", lng, key)
				case lng != "en" && text == enText && !sameInEnglish[pluralSuffix.ReplaceAllString(key, "")]:
					t.Errorf("%s %q is still the English text %q", lng, key, text)
				}
				if got, want := placeholderSet(text), placeholderSet(enText); ok && !slices.Equal(got, want) {
					t.Errorf("%s %q has placeholders %v, en %v", lng, key, got, want)
				}
			}
			for key := range tr {
				if _, ok := want[key]; !ok {
					t.Errorf("%s has key %q that en lacks (or a plural form the language has not)", lng, key)
				}
			}
		})
	}
}

func placeholderSet(text string) []string {
	ph := placeholders.FindAllString(text, -1)
	slices.Sort(ph)
	return slices.Compact(ph)
}

func TestLocale(t *testing.T) {
	tests := []struct{ in, want string }{
		{"en", "en"}, {"jp", "jp"}, {"es", "es"}, {"ru", "ru"}, {"zh", "zh"}, {"ar", "ar"},
		{"", "en"}, {"fr", "en"}, {"xx-YY", "en"},
		{"JP", "jp"}, {"ja", "jp"}, {"ja-JP", "jp"}, {"zh-CN", "zh"}, {"zh_Hans", "zh"},
		{"ar-EG", "ar"}, {" es ", "es"}, {"es-MX", "es"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Locale(tt.in); got != tt.want {
				t.Errorf("Locale(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := In(tt.in).Code(); got != tt.want {
				t.Errorf("In(%q).Code() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTagAndDir(t *testing.T) {
	for lng, want := range map[string][2]string{"en": {"en", "ltr"}, "jp": {"ja", "ltr"}, "zh": {"zh-Hans", "ltr"},
		"ar": {"ar", "rtl"}, "es": {"es", "ltr"}, "ru": {"ru", "ltr"}} {
		if l := In(lng); l.Tag() != want[0] || l.Dir() != want[1] {
			t.Errorf("%s: lang %q dir %q, want %q %q", lng, l.Tag(), l.Dir(), want[0], want[1])
		}
	}
}
