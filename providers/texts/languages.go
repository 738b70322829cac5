package texts

import (
	"encoding/json"
	"fmt"

	"parla/webui"
)

// Language is one interface language as webui/src/languages.json lists it: the one table
// the web UI (webui/src/languages.js) and the server (these texts, api/pages.go, Stripe's
// locale) read, so a language has one code and one tag everywhere.
type Language struct {
	// ID is the product's own code (en, jp, es, ru, zh, ar): the locales' folders, the
	// orders' stored locale, the catalog's keys.
	ID string
	// Tag is its BCP 47 tag, for every html lang (the app, the link page, the test
	// checkout, the letters) and Intl: ja, zh-Hans.
	Tag string
	// Hreflang is the language's code (ja, zh): the addresses' prefix (/ja/tts), hreflang,
	// and what speech engines and Stripe take.
	Hreflang string
	// OG is its og:locale (ja_JP).
	OG string
	// RTL: written right to left (Arabic).
	RTL bool
}

// languages are the interface languages, English (the fallback) first.
var languages = parseLanguages(webui.Languages)

// parseLanguages reads the shared table; a broken one is a build's mistake, caught at start.
func parseLanguages(data []byte) []Language {
	var list []struct {
		ID, Tag, Hreflang, Og string
		RTL                   bool `json:"rtl"`
	}
	if err := json.Unmarshal(data, &list); err != nil || len(list) == 0 || list[0].ID != "en" {
		panic(fmt.Sprintf("texts: webui/src/languages.json: %v (%d languages, English first)", err, len(list)))
	}
	out := make([]Language, len(list))
	for i, l := range list {
		out[i] = Language{ID: l.ID, Tag: l.Tag, Hreflang: l.Hreflang, OG: l.Og, RTL: l.RTL}
	}
	return out
}

// Languages returns the interface languages, English first.
func Languages() []Language { return append([]Language(nil), languages...) }

// language is the table's row for an interface code, and whether there is one.
func language(id string) (Language, bool) {
	for _, l := range languages {
		if l.ID == id {
			return l, true
		}
	}
	return Language{}, false
}

// LanguageCode turns an interface code into its language's code (jp → ja; the others are
// their own), or with back a language code into the interface's (ja → jp), by the table's
// Hreflang. It is the one place in Go where the two meet: speech engines, Stripe and the
// pages take language codes.
func LanguageCode(code string, back bool) string {
	for _, l := range languages {
		if !back && code == l.ID {
			return l.Hreflang
		}
		if back && code == l.Hreflang {
			return l.ID
		}
	}
	return code
}
