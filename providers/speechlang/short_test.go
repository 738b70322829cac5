package speechlang

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// shortSentence is one line of testdata/short.tsv.
type shortSentence struct{ Lang, Text string }

func loadShort(t testing.TB) []shortSentence { return loadSentences(t, "testdata/short.tsv") }

// loadSentences reads a corpus of short sentences: a language code, a tab, the sentence;
// blank lines and lines starting with # are skipped.
func loadSentences(t testing.TB, path string) []shortSentence {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []shortSentence
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lang, text, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("%s: no tab in %q", path, line)
		}
		out = append(out, shortSentence{lang, text})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// interfaceLanguages are the product's six interface languages (as language codes).
var interfaceLanguages = map[string]bool{"en": true, "ja": true, "es": true, "ru": true, "zh": true, "ar": true}

// The issue's targets, with the English interface: at least 97 % right in the six interface
// languages and at least 93 % over all. Every sentence is 3–12 words: short texts are what
// visitors type first, and what trigram statistics alone get wrong.
func TestShortSentencesLanguage(t *testing.T) {
	wantAccuracy(t, measureCorpus(t, "testdata/short.tsv", 300), 0.97, 0.93)
}

// wantAccuracy fails the test when a is below ui in the interface languages or below all
// over all.
func wantAccuracy(t *testing.T, a accuracy, ui, all float64) {
	t.Helper()
	if a.ui() < ui || a.all() < all {
		t.Errorf("below target: %.1f %% in the interface languages (want %.0f), %.1f %% over all (want %.0f)", 100*a.ui(), 100*ui, 100*a.all(), 100*all)
	}
}

// accuracy counts right answers per language.
type accuracy struct{ right, total map[string]int }

func (a accuracy) rate(keep func(lang string) bool) float64 {
	var r, n int
	for l, t := range a.total {
		if keep(l) {
			r, n = r+a.right[l], n+t
		}
	}
	return float64(r) / float64(max(n, 1))
}

func (a accuracy) all() float64 { return a.rate(func(string) bool { return true }) }
func (a accuracy) ui() float64  { return a.rate(func(l string) bool { return interfaceLanguages[l] }) }

// measureCorpus detects every sentence of a corpus with the English interface, checks that
// it has at least min sentences of 3–12 words, and logs the misses and the accuracy over
// all, in the interface languages and per language (shown with -v).
func measureCorpus(t *testing.T, path string, min int) accuracy {
	t.Helper()
	d := New(espeakLangs)
	corpus := loadSentences(t, path)
	if len(corpus) < min {
		t.Fatalf("%s has %d sentences, want at least %d", path, len(corpus), min)
	}
	a := accuracy{right: map[string]int{}, total: map[string]int{}}
	for _, s := range corpus {
		if n := len(strings.Fields(s.Text)); (n < 3 || n > 12) && !noSpaces(s.Lang) {
			t.Errorf("%s %q: %d words, want 3–12", s.Lang, s.Text, n)
		}
		r, err := d.Detect(s.Text, "en")
		a.total[s.Lang]++
		if err == nil && r.Language == s.Lang {
			a.right[s.Lang]++
		} else {
			t.Logf("miss: %s %q → %q %v", s.Lang, s.Text, r.Language, err)
		}
	}
	langs := slices.Sorted(maps.Keys(a.total))
	var per strings.Builder
	for _, l := range langs {
		fmt.Fprintf(&per, " %s %d/%d", l, a.right[l], a.total[l])
	}
	t.Logf("%s, English interface: %.1f %% right over all (%d sentences), %.1f %% in the interface languages; per language:%s",
		path, 100*a.all(), len(corpus), 100*a.ui(), per.String())
	return a
}

// The tuning set: rules may be tuned on its misses. It is held to the held-out set's
// targets; its figures (-v) beside the held-out set's show how far tuning carries to
// sentences it never saw.
func TestTuneAccuracy(t *testing.T) {
	wantAccuracy(t, measureCorpus(t, "testdata/tune.tsv", 300), 0.97, 0.95)
}

// The issue's targets on sentences no rule was tuned on: at least 97 % in the six interface
// languages and 95 % over all. Never change a rule for a sentence of heldout.tsv.
func TestHeldOutAccuracy(t *testing.T) {
	wantAccuracy(t, measureCorpus(t, "testdata/heldout.tsv", 300), 0.97, 0.95)
}

// noSpaces reports whether lang is written without spaces between words.
func noSpaces(lang string) bool { return lang == "ja" || lang == "zh" }

// The sentences the issue found spoken in the wrong language, with the English interface.
func TestShortSentencesFromTheIssue(t *testing.T) {
	d := New(espeakLangs)
	for text, want := range map[string]string{
		"Hello world, how are you today?": "en", "How are you today?": "en",
		"مرحبا، كيف حالك؟": "ar", "Hola, ¿cómo estás?": "es", "Muchas gracias por todo.": "es",
		"Vielen Dank für deine Hilfe!": "de", "Buongiorno, come stai?": "it",
		"Дякую, у мене все добре.": "uk", "Teşekkürler, iyiyim.": "tr",
	} {
		if r, err := d.Detect(text, "en"); err != nil || r.Language != want {
			t.Errorf("%q: got %q, %v; want %s", text, r.Language, err, want)
		}
	}
}

// The visitor's language wins a near tie ("Hej med dig" is Swedish and Danish alike), and
// only a near tie: a language without evidence does not win, nor does the visitor's over a
// clear answer.
func TestShortSentencesPrior(t *testing.T) {
	d := New(espeakLangs)
	for _, tt := range []struct{ text, prior, want string }{
		{"Hej med dig", "sv", "sv"},
		{"Hej med dig", "da", "da"},
		{"Hej med dig", "en", "da"},
		{"Hej, hvor er du?", "sv", "da"},
		{"Hej, hur mår du?", "da", "sv"},
		{"Hola amigo", "es", "es"},
	} {
		if r, err := d.Detect(tt.text, tt.prior); err != nil || r.Language != tt.want {
			t.Errorf("%q, prior %s: got %q, %v; want %s", tt.text, tt.prior, r.Language, err, tt.want)
		}
	}
}

// The quote detects the text on every keystroke (debounced): 1,000 characters must take
// under 20 ms. Run with: go test ./providers/speechlang -run '^$' -bench Detect1k
func BenchmarkDetect1k(b *testing.B) {
	var text strings.Builder
	for _, s := range loadShort(b) {
		if text.Len() > 4000 {
			break
		}
		text.WriteString(s.Text + " ")
	}
	t := string([]rune(text.String())[:1000])
	d := New(espeakLangs)
	for b.Loop() {
		if _, err := d.Detect(t, "en"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew is what a detector costs to build (once per engine, at start).
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		New(espeakLangs)
	}
}
