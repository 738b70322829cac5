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
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
)

// Thresholds of the rules, in letters and whatlanggo's confidence (0–1).
const (
	// sampleRunes is how much of a paragraph the detector reads.
	sampleRunes = 600
	// strongLetters and strongConfidence make a paragraph's detection count on its own;
	// weaker paragraphs (a title, a name, a code) take their neighbours' language.
	strongLetters    = 25
	strongConfidence = 0.5
	// tellConfidence is the least confidence at which a text with no strong paragraph is
	// said to be in the detected language; below it the language cannot be told.
	tellConfidence = 0.15
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
	for l := range whatlanggo.Langs {
		if _, ok := d.engineCode(code(l)); ok {
			d.options.Whitelist[l] = true
		}
	}
	return d
}

// Languages returns the engine's languages, sorted.
func (d *Detector) Languages() []string { return slices.Clone(d.langs) }

// aliases are codes that name the same language as another the engine may list.
var aliases = map[string][]string{
	"nb": {"no"}, "no": {"nb"}, "nn": {"nb", "no"}, "jp": {"ja"}, "cmn": {"zh"},
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
// primary subtag, lower case ("pt-BR" → "pt", "zh-Hans" → "zh", "cmn" → "zh"; the
// product's interface code "jp" → "ja").
func Normalize(tag string) string {
	tag = strings.ToLower(strings.TrimSpace(tag))
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	switch tag {
	case "cmn":
		return "zh"
	case "jp":
		return "ja"
	}
	return tag
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
// A text mostly in letters of a script no voice reads, or confidently in a language the
// engine lacks, is refused with an *UnsupportedError.
func (d *Detector) Detect(text, fallback string) (Result, error) {
	if err := d.checkScripts(text); err != nil {
		return Result{}, err
	}
	paras := splitParagraphs(text)
	langs := make([]string, len(paras))
	letters := make([]int, len(paras))
	first := -1
	for i, p := range paras {
		lang, n, strong, err := d.paragraph(p)
		if err != nil {
			return Result{}, err
		}
		letters[i] = n
		if strong {
			langs[i] = lang
			if first < 0 {
				first = i
			}
		}
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

// paragraph detects one paragraph: its language, its letter count, and whether that
// detection is strong enough to stand on its own.
func (d *Detector) paragraph(p string) (lang string, letters int, strong bool, err error) {
	sample, letters := sampleOf(p)
	if letters < strongLetters {
		return "", letters, false, nil
	}
	info := whatlanggo.Detect(sample)
	if info.Lang < 0 {
		return "", letters, false, nil
	}
	if c, ok := d.engineCode(code(info.Lang)); ok {
		return c, letters, info.Confidence >= strongConfidence, nil
	}
	if info.IsReliable() {
		return "", letters, false, &UnsupportedError{Language: code(info.Lang)}
	}
	// Unsure and not one of ours: the closest language the engine has.
	info = whatlanggo.DetectWithOptions(sample, d.options)
	if c, ok := d.engineCode(code(info.Lang)); ok && info.Lang >= 0 {
		return c, letters, info.Confidence >= strongConfidence, nil
	}
	return "", letters, false, nil
}

// whole detects a text none of whose paragraphs could be told alone.
func (d *Detector) whole(text, fallback string) (string, error) {
	sample, _ := sampleOf(text)
	main := mainScript(sample)
	info := whatlanggo.DetectWithOptions(sample, d.options)
	if info.Lang >= 0 && info.Confidence >= tellConfidence {
		if c, ok := d.engineCode(code(info.Lang)); ok && readsScript(c, main) {
			return c, nil
		}
	}
	candidates := []string{Normalize(fallback), "en"}
	for _, c := range candidates {
		if c, ok := d.engineCode(c); ok && (main == "" || readsScript(c, main)) {
			return c, nil
		}
	}
	for _, c := range d.langs {
		if readsScript(c, main) {
			return c, nil
		}
	}
	if len(d.langs) == 0 {
		return "", &UnsupportedError{Language: Normalize(fallback)}
	}
	return d.langs[0], nil
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
	for _, r := range text {
		if !unicode.IsLetter(r) {
			continue
		}
		s := scriptOf(r)
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
	for _, r := range text {
		if !unicode.IsLetter(r) {
			continue
		}
		if d.reads[scriptOf(r)] {
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

// splitParagraphs cuts text after each newline; the pieces joined give the text back.
func splitParagraphs(text string) []string {
	return strings.SplitAfter(text, "\n")
}

// code is the language code of a whatlanggo language: ISO 639-1 where there is one.
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
