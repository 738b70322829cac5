package speechlang

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// shortSentence is one line of testdata/short.tsv.
type shortSentence struct{ Lang, Text string }

func loadShort(t testing.TB) []shortSentence {
	t.Helper()
	f, err := os.Open("testdata/short.tsv")
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
			t.Fatalf("no tab in %q", line)
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
	d := New(espeakLangs)
	corpus := loadShort(t)
	if len(corpus) < 300 {
		t.Fatalf("corpus has %d sentences, want at least 300", len(corpus))
	}
	var right, total, uiRight, uiTotal int
	for _, s := range corpus {
		if n := len(strings.Fields(s.Text)); (n < 3 || n > 12) && !noSpaces(s.Lang) {
			t.Errorf("%s %q: %d words, want 3–12", s.Lang, s.Text, n)
		}
		r, err := d.Detect(s.Text, "en")
		ok := err == nil && r.Language == s.Lang
		if !ok {
			t.Logf("miss: %s %q → %q %v", s.Lang, s.Text, r.Language, err)
		}
		total++
		if ok {
			right++
		}
		if interfaceLanguages[s.Lang] {
			uiTotal++
			if ok {
				uiRight++
			}
		}
	}
	all, ui := float64(right)/float64(total), float64(uiRight)/float64(uiTotal)
	t.Logf("English interface: %d/%d right (%.1f %%); interface languages %d/%d (%.1f %%)", right, total, 100*all, uiRight, uiTotal, 100*ui)
	if ui < 0.97 || all < 0.93 {
		t.Errorf("below target: %.1f %% in the interface languages (want 97), %.1f %% over all (want 93)", 100*ui, 100*all)
	}
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
