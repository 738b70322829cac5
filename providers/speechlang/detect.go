// Package speechlang tells which language a text to be spoken is in, paragraph by
// paragraph, among the languages a speech engine speaks, and refuses texts written in a
// script none of its voices reads.
//
// Detection is github.com/abadojack/whatlanggo's trigram profiles (84 languages, no model
// files, no start-up cost). A paragraph is judged on at most its first sampleRunes
// letters: trigram statistics settle long before that, so 100,000 characters take a few
// milliseconds. README.md ("Text-to-speech in the text's language") has the measurements
// that chose it over lingua-go.
package speechlang

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/abadojack/whatlanggo"
)

// Thresholds of the rules, in letters and whatlanggo's confidence (0–1).
const (
	// sampleRunes is how much of a paragraph the detector reads.
	sampleRunes = 200
	// strongLetters and strongConfidence make a paragraph's detection count on its own;
	// weaker paragraphs (a title, a name, a code) take their neighbours' language.
	strongLetters    = 25
	strongConfidence = 0.1
	// sureConfidence spares a paragraph the second look, among all of whatlanggo's
	// languages, for one the engine lacks.
	sureConfidence = 0.3
	// tellConfidence is the least confidence at which a text with no strong paragraph is
	// said to be in the detected language; below it the language cannot be told.
	tellConfidence = 0.3
	// tellLetters is the fewest letters a text in a script several languages share must
	// have to be told at all: "Anna Schmidt" (11) is a name, not Swedish.
	tellLetters = 12
)

// ErrUnsupported is wrapped by every UnsupportedError.
var ErrUnsupported = errors.New("language not spoken by this engine")

// UnsupportedError says why a text cannot be spoken: its language (a code) or its script
// (a Unicode script name) is not one the engine has.
type UnsupportedError struct {
	Language string
	Script   string
}

func (e *UnsupportedError) Error() string {
	if e.Script != "" {
		return fmt.Sprintf("%v: the text is mostly in the %s script, which no voice reads", ErrUnsupported, e.Script)
	}
	return fmt.Sprintf("%v: %q", ErrUnsupported, e.Language)
}

func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// Span is a run of consecutive paragraphs in one language. The spans of a text, joined,
// give the text back.
type Span struct {
	Language string
	Text     string
}

// Result is what a text will be spoken in.
type Result struct {
	// Language is the main language: the one of most letters.
	Language string
	// Detected is false when the caller chose the language.
	Detected bool
	// Spans are the text's paragraphs grouped by language (one span when chosen).
	Spans []Span
}

// Detector finds languages among those of one engine. It holds no mutable state and is
// safe for concurrent use.
type Detector struct {
	langs   []string
	has     map[string]bool
	reads   map[string]bool // scripts some language of the engine reads
	options whatlanggo.Options
	common  whatlanggo.Options         // the engine's common languages (see commonLanguages)
	codes   map[whatlanggo.Lang]string // whatlanggo's languages as codes, computed once
}

// New returns a detector for an engine speaking languages (codes as Normalize returns).
func New(languages []string) *Detector {
	d := &Detector{has: map[string]bool{}, reads: map[string]bool{}}
	for _, l := range languages {
		if !d.has[l] {
			d.langs = append(d.langs, l)
		}
		d.has[l] = true
		for _, s := range Scripts(l) {
			d.reads[s] = true
		}
	}
	slices.Sort(d.langs)
	d.options.Whitelist = map[whatlanggo.Lang]bool{}
	d.common.Whitelist = map[whatlanggo.Lang]bool{}
	d.codes = map[whatlanggo.Lang]string{}
	for l := range whatlanggo.Langs {
		d.codes[l] = code(l)
		if _, ok := d.engineCode(d.codes[l]); ok {
			d.options.Whitelist[l] = true
			if commonLanguages[d.codes[l]] { // whatlanggo reads a key's presence, not its value
				d.common.Whitelist[l] = true
			}
		}
	}
	return d
}

// Languages returns the engine's languages, sorted.
func (d *Detector) Languages() []string { return slices.Clone(d.langs) }

// aliases are codes that name the same language as another the engine may list.
var aliases = map[string][]string{
	"nb": {"no"}, "no": {"nb"}, "nn": {"nb", "no"}, "cmn": {"zh"},
	"iw": {"he"}, "in": {"id"}, "fil": {"tl"}, "pes": {"fa"}, "ydd": {"yi"},
}

// engineCode returns the engine's code for a language code, or false when the engine
// does not speak it.
func (d *Detector) engineCode(lang string) (string, bool) {
	if d.has[lang] {
		return lang, true
	}
	for _, a := range aliases[lang] {
		if d.has[a] {
			return a, true
		}
	}
	return "", false
}

// Normalize reduces a BCP-47 tag to the language code engines are listed under: the
// primary subtag, lower case ("pt-BR" → "pt", "zh-Hans" → "zh", "cmn" → "zh"). It knows
// language codes only: callers turn the product's interface codes into them first.
func Normalize(tag string) string {
	tag = strings.ToLower(strings.TrimSpace(tag))
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	if tag == "cmn" {
		return "zh"
	}
	return tag
}

// Spans is how a text to be spoken divides by language, as engines that speak per language
// read it: with detect (the order book found that the text mixes languages), each
// paragraph's own language (Detect, with lang as the fallback: the same detector gives the
// order book's answer again); without, the whole text in lang.
func (d *Detector) Spans(text, lang string, detect bool) ([]Span, error) {
	if !detect {
		return []Span{{Language: lang, Text: text}}, nil
	}
	r, err := d.Detect(text, lang)
	if err != nil {
		return nil, err
	}
	return r.Spans, nil
}

// Choose is Detect for a language the visitor named: the whole text in it, when the
// engine speaks it and the text is not mostly in a script its voices do not read.
func (d *Detector) Choose(text, lang string) (Result, error) {
	code, ok := d.engineCode(Normalize(lang))
	if !ok {
		return Result{}, &UnsupportedError{Language: lang}
	}
	if err := d.checkScripts(text); err != nil {
		return Result{}, err
	}
	return Result{Language: code, Spans: []Span{{code, text}}}, nil
}

// Detect finds the language of each paragraph (a line: paragraphs are newline-separated)
// and groups consecutive paragraphs of one language. A paragraph too short or too unsure
// to tell takes the language of the strong paragraph before it (after it, at the start).
// When no paragraph can be told, the whole text is tried at once, and failing that it is
// spoken in fallback (the visitor's interface language) when the engine speaks it and
// reads its script, else in English, else in the first language reading the text's script.
//
// A text mostly in letters of a script no voice reads, or mostly in paragraphs surely in
// languages the engine lacks, is refused with an *UnsupportedError.
func (d *Detector) Detect(text, fallback string) (Result, error) {
	if err := d.checkScripts(text); err != nil {
		return Result{}, err
	}
	paras := splitParagraphs(text)
	found := d.paragraphs(paras, Normalize(fallback))
	langs := make([]string, len(paras))
	letters := make([]int, len(paras))
	first := -1
	total, foreign := 0, map[string]int{}
	for i, f := range found {
		letters[i] = f.letters
		total += f.letters
		if f.foreign != "" {
			foreign[f.foreign] += f.letters
		}
		if f.strong {
			langs[i] = f.lang
			if first < 0 {
				first = i
			}
		}
	}
	// Mostly in languages the engine lacks: refused. A few such paragraphs among others
	// take their neighbours' language, as unsure ones do.
	if n, lang := maxCount(foreign); n*2 > total {
		return Result{}, &UnsupportedError{Language: lang}
	}
	if first < 0 {
		lang, err := d.whole(text, fallback)
		if err != nil {
			return Result{}, err
		}
		return Result{Language: lang, Detected: true, Spans: []Span{{lang, text}}}, nil
	}
	for i := range langs {
		switch {
		case langs[i] != "":
		case i < first:
			langs[i] = langs[first]
		default:
			langs[i] = langs[i-1]
		}
	}
	kanjiAsJapanese(langs, letters)
	r := Result{Detected: true}
	count := map[string]int{}
	for i, p := range paras {
		count[langs[i]] += letters[i]
		if n := len(r.Spans); n > 0 && r.Spans[n-1].Language == langs[i] {
			r.Spans[n-1].Text += p
			continue
		}
		r.Spans = append(r.Spans, Span{langs[i], p})
	}
	for _, s := range r.Spans { // the first of the most letters, for a stable answer
		if r.Language == "" || count[s.Language] > count[r.Language] {
			r.Language = s.Language
		}
	}
	return r, nil
}

// kanjiAsJapanese turns paragraphs read as Chinese into Japanese where the text is mostly
// Japanese (langs are the paragraphs' languages, letters their lengths). Japanese is written
// in kanji and kana; a paragraph of kanji alone reads as Chinese to the detector. In a text
// with Japanese paragraphs and no Chinese with kana-free certainty of its own, such
// paragraphs are Japanese.
func kanjiAsJapanese(langs []string, letters []int) {
	if slices.Contains(langs, "ja") {
		ja, zh := 0, 0
		for i, l := range langs {
			switch l {
			case "ja":
				ja += letters[i]
			case "zh":
				zh += letters[i]
			}
		}
		if ja >= zh {
			for i := range langs {
				if langs[i] == "zh" {
					langs[i] = "ja"
				}
			}
		}
	}
}

// maxCount returns the largest count of m and its key (the first in order on a tie).
func maxCount(m map[string]int) (int, string) {
	best, key := 0, ""
	for k, n := range m {
		if n > best || n == best && k < key {
			best, key = n, k
		}
	}
	return best, key
}

// splitParagraphs cuts text after each newline; the pieces joined give the text back.
func splitParagraphs(text string) []string {
	return strings.SplitAfter(text, "\n")
}

// code is the language code of a whatlanggo language: ISO 639-1 where there is one.
// (whatlanggo builds a map on every Iso6391 call: Detector.codes keeps the answers.)
func code(l whatlanggo.Lang) string {
	switch l {
	case whatlanggo.Pes:
		return "fa"
	case whatlanggo.Ydd:
		return "yi"
	}
	if c := l.Iso6391(); c != "" {
		return c
	}
	return l.Iso6393()
}
