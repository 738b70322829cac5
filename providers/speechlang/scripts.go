package speechlang

import (
	"unicode"
	"unicode/utf8"
)

// script is a writing system a letter belongs to, as Unicode names it.
type script struct {
	name  string
	table *unicode.RangeTable
}

// scripts are the writing systems letters are sorted into, the most common first so that a
// letter is placed after few lookups. A letter in none of them is in an "other" script
// (Tibetan, Khmer, Lao, Mongolian, …), which no engine here reads.
var scripts = []script{
	{"Latin", unicode.Latin},
	{"Cyrillic", unicode.Cyrillic},
	{"Han", unicode.Han},
	{"Arabic", unicode.Arabic},
	{"Hiragana", unicode.Hiragana},
	{"Katakana", unicode.Katakana},
	{"Hangul", unicode.Hangul},
	{"Greek", unicode.Greek},
	{"Hebrew", unicode.Hebrew},
	{"Devanagari", unicode.Devanagari},
	{"Thai", unicode.Thai},
	{"Bengali", unicode.Bengali},
	{"Tamil", unicode.Tamil},
	{"Telugu", unicode.Telugu},
	{"Kannada", unicode.Kannada},
	{"Malayalam", unicode.Malayalam},
	{"Gujarati", unicode.Gujarati},
	{"Gurmukhi", unicode.Gurmukhi},
	{"Oriya", unicode.Oriya},
	{"Sinhala", unicode.Sinhala},
	{"Armenian", unicode.Armenian},
	{"Georgian", unicode.Georgian},
	{"Ethiopic", unicode.Ethiopic},
	{"Myanmar", unicode.Myanmar},
	{"Cherokee", unicode.Cherokee},
}

// otherScript names letters outside scripts.
const otherScript = "Other"

// scriptReader sorts letters into scripts, remembering the last script found: letters
// come in runs of one script, so most are placed with one lookup.
type scriptReader struct{ last *script }

func (sr *scriptReader) of(r rune) string {
	if r < 0x250 {
		return "Latin"
	}
	if sr.last != nil && unicode.Is(sr.last.table, r) {
		return sr.last.name
	}
	for i := range scripts {
		if unicode.Is(scripts[i].table, r) {
			sr.last = &scripts[i]
			return scripts[i].name
		}
	}
	return otherScript
}

// scriptName names the script of a letter outside scripts, for messages.
func scriptName(r rune) string {
	for name, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return name
		}
	}
	return otherScript
}

// languageScripts are the scripts a language's voices read when it is not written in the
// Latin script alone. Languages not listed read Latin.
var languageScripts = map[string][]string{
	"am": {"Ethiopic"}, "ar": {"Arabic"}, "as": {"Bengali"}, "ba": {"Cyrillic"},
	"be": {"Cyrillic"}, "bg": {"Cyrillic"}, "bn": {"Bengali"}, "bpy": {"Bengali"},
	"chr": {"Cherokee"}, "cv": {"Cyrillic"}, "el": {"Greek"}, "fa": {"Arabic"},
	"grc": {"Greek"}, "gu": {"Gujarati"}, "hak": {"Han"}, "he": {"Hebrew"},
	"hi": {"Devanagari"}, "hy": {"Armenian"}, "hyw": {"Armenian"},
	"ja": {"Han", "Hiragana", "Katakana"}, "ka": {"Georgian"}, "kk": {"Cyrillic"},
	"kn": {"Kannada"}, "ko": {"Hangul"}, "kok": {"Devanagari"}, "ky": {"Cyrillic"},
	"mk": {"Cyrillic"}, "ml": {"Malayalam"}, "mr": {"Devanagari"}, "my": {"Myanmar"},
	"ne": {"Devanagari"}, "nog": {"Cyrillic"}, "or": {"Oriya"}, "pa": {"Gurmukhi"},
	"ru": {"Cyrillic"}, "sd": {"Arabic"}, "shn": {"Myanmar"}, "si": {"Sinhala"},
	"sr": {"Cyrillic", "Latin"}, "ta": {"Tamil"}, "te": {"Telugu"}, "th": {"Thai"},
	"tt": {"Cyrillic"}, "ug": {"Arabic"}, "uk": {"Cyrillic"}, "ur": {"Arabic"},
	"yue": {"Han"}, "zh": {"Han"},
}

// Scripts returns the scripts a language is written in, Latin for those not listed.
func Scripts(lang string) []string {
	if s, ok := languageScripts[lang]; ok {
		return s
	}
	return []string{"Latin"}
}

// readsScript reports whether lang's voice reads letters of script.
func readsScript(lang, script string) bool {
	for _, s := range Scripts(lang) {
		if s == script {
			return true
		}
	}
	return false
}

// sampleOf returns the start of p that the detector reads and the number of letters in
// all of p.
func sampleOf(p string) (string, int) {
	letters, end := 0, len(p)
	for i, r := range p {
		if unicode.IsLetter(r) {
			letters++
			if letters == sampleRunes {
				end = i + utf8.RuneLen(r)
			}
		}
	}
	return p[:end], letters
}

// mainScript returns the script of most of text's letters, "" when it has none.
func mainScript(text string) string {
	count := map[string]int{}
	best := ""
	var sr scriptReader
	for _, r := range text {
		if !unicode.IsLetter(r) {
			continue
		}
		s := sr.of(r)
		count[s]++
		if best == "" || count[s] > count[best] {
			best = s
		}
	}
	return best
}

// checkScripts refuses a text more than half of whose letters are in scripts no voice of
// the engine reads. Japanese kana and kanji count together.
func (d *Detector) checkScripts(text string) error {
	var read, unread int
	var first rune
	var sr scriptReader
	for _, r := range text {
		if !unicode.IsLetter(r) {
			continue
		}
		if d.reads[sr.of(r)] {
			read++
			continue
		}
		if unread == 0 {
			first = r
		}
		unread++
	}
	if unread > read {
		return &UnsupportedError{Script: scriptName(first)}
	}
	return nil
}
