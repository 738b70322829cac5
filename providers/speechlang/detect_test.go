package speechlang

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// corpusCase is one language's texts: a short question and two sentences.
type corpusCase struct{ Lang, Short, Long string }

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var c []corpusCase
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c) < 20 {
		t.Fatalf("corpus has %d languages, want at least 20", len(c))
	}
	return c
}

// Known answers that are not the text's language. Short texts whose words, letters and
// trigrams do not tell fall back to the visitor's language, English here, or to the
// script's usual language; one long text is taken for its neighbour. A change either way
// shows up here.
var (
	longMisses  = map[string]string{"cs": "sl"}
	shortMisses = map[string]string{}
)

func TestDetectLanguages(t *testing.T) {
	d := New(espeakLangs)
	var shortOK, longOK int
	for _, c := range loadCorpus(t) {
		t.Run(c.Lang, func(t *testing.T) {
			for _, tt := range []struct {
				kind, text string
				misses     map[string]string
				ok         *int
			}{{"short", c.Short, shortMisses, &shortOK}, {"long", c.Long, longMisses, &longOK}} {
				want := c.Lang
				if m, ok := tt.misses[c.Lang]; ok {
					want = m
				}
				r, err := d.Detect(tt.text, "en")
				if err != nil {
					t.Fatalf("%s: %v", tt.kind, err)
				}
				if r.Language != want || !r.Detected || len(r.Spans) != 1 || r.Spans[0].Text != tt.text {
					t.Errorf("%s %q: got %+v, want %s", tt.kind, tt.text, r, want)
				}
				if r.Language == c.Lang {
					*tt.ok++
				}
			}
		})
	}
	t.Logf("right language: short %d, long %d of %d", shortOK, longOK, len(loadCorpus(t)))
}

// A long text of many paragraphs in each language, as a visitor would order it.
func TestDetectLongTexts(t *testing.T) {
	d := New(espeakLangs)
	for _, c := range loadCorpus(t) {
		if _, miss := longMisses[c.Lang]; miss {
			continue
		}
		text := strings.Repeat(c.Long+" "+c.Long+"\n\n", 20)
		r, err := d.Detect(text, "en")
		if err != nil || r.Language != c.Lang || len(r.Spans) != 1 {
			t.Errorf("%s: got %+v, %v", c.Lang, r.Language, err)
		}
	}
}

func corpusText(t *testing.T, lang string) string {
	for _, c := range loadCorpus(t) {
		if c.Lang == lang {
			return c.Long
		}
	}
	t.Fatalf("no %s in corpus", lang)
	return ""
}

func TestDetectMixedParagraphs(t *testing.T) {
	d := New(espeakLangs)
	en, es, ru, ja, ar := corpusText(t, "en"), corpusText(t, "es"), corpusText(t, "ru"), corpusText(t, "ja"), corpusText(t, "ar")
	tests := []struct {
		name  string
		text  string
		main  string
		spans []string // languages of the spans, in order
	}{
		{"two languages", en + "\n\n" + es + "\n", "en", []string{"en", "es"}},
		{"titles merge into their paragraph", "Capítulo uno\n" + es + "\nChapter two\n" + en + " " + en, "en", []string{"es", "en"}},
		{"leading short line takes the next", "Maria\n" + ru + "\n" + ru, "ru", []string{"ru"}},
		{"five", en + "\n" + ja + "\n" + ar + "\n" + es + "\n" + ru, "en", []string{"en", "ja", "ar", "es", "ru"}}, // main: most letters
		{"same language regrouped", es + "\n" + es + "\n\n" + es, "es", []string{"es"}},
		{"kanji-only paragraph in a Japanese text", ja + "\n" + "東京都千代田区丸内一丁目九番一号東京駅構内中央通路北口改札前広場地下一階案内所窓口" + "\n" + ja, "ja", []string{"ja"}},
		{"windows newlines", en + "\r\n" + ru + "\r\n", "en", []string{"en", "ru"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := d.Detect(tt.text, "en")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var joined strings.Builder
			for _, s := range r.Spans {
				got = append(got, s.Language)
				joined.WriteString(s.Text)
			}
			if strings.Join(got, ",") != strings.Join(tt.spans, ",") {
				t.Errorf("spans %v, want %v", got, tt.spans)
			}
			if r.Language != tt.main {
				t.Errorf("main language %q, want %q", r.Language, tt.main)
			}
			if joined.String() != tt.text {
				t.Errorf("spans do not give the text back: %q", joined.String())
			}
		})
	}
}

func TestDetectCannotTell(t *testing.T) {
	d := New(espeakLangs)
	tests := []struct {
		text, fallback, want string
	}{
		{"yyyyyyyy", "es", "es"},
		{"yyyyyyyy", "ru", "en"},              // the Russian voice reads no Latin letters
		{"yyyyyyyy", "ja", "en"},              // nor the Japanese one
		{"Anna Schmidt", "ar", "en"},          // a name, for an Arabic visitor
		{"XK-42-B7", "zh", "en"},              // a code
		{"12345 67", "ja", "ja"},              // digits: any voice reads them
		{"!!! ???", "ar", "ar"},               // nothing to read but punctuation
		{"Иван Петров", "en", "ru"},           // a Cyrillic name
		{"Иван Петров", "uk", "uk"},           // for a Ukrainian visitor
		{"東京都", "ja", "ja"},                   // kanji alone, for a Japanese visitor (callers turn the interface's jp into ja)
		{"東京都", "en", "zh"},                   // and for an English one
		{"yyyyyyyy", "xx", "en"},              // unknown interface language
		{"Where is the station?", "es", "en"}, // short but sure
	}
	for _, tt := range tests {
		t.Run(tt.text+"/"+tt.fallback, func(t *testing.T) {
			r, err := d.Detect(tt.text, tt.fallback)
			if err != nil {
				t.Fatal(err)
			}
			if r.Language != tt.want {
				t.Errorf("got %q, want %q", r.Language, tt.want)
			}
		})
	}
}

func TestDetectUnsupported(t *testing.T) {
	d := New(espeakLangs)
	tibetan := "བོད་ཀྱི་སྐད་ཡིག་ནི་བོད་ཀྱི་མི་རིགས་ཀྱི་སྐད་ཡིག་ཡིན། "
	khmer := "ភាសាខ្មែរគឺជាភាសាផ្លូវការរបស់ប្រទេសកម្ពុជា។ "
	tests := []struct {
		name, text, script, lang string
	}{
		{"tibetan", strings.Repeat(tibetan, 3), "Tibetan", ""},
		{"khmer", khmer, "Khmer", ""},
		{"khmer with an English name", khmer + " Parla", "Khmer", ""},
		{"lao", "ພາສາລາວແມ່ນພາສາທາງການຂອງປະເທດລາວ", "Lao", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Detect(tt.text, "en")
			var ue *UnsupportedError
			if !errors.As(err, &ue) || !errors.Is(err, ErrUnsupported) {
				t.Fatalf("got %v, want an UnsupportedError", err)
			}
			if ue.Script != tt.script && ue.Language != tt.lang {
				t.Errorf("got %+v, want script %q or language %q", ue, tt.script, tt.lang)
			}
		})
	}
	// A few words in an unread script inside a text the voices read are fine.
	if _, err := d.Detect(corpusText(t, "en")+" "+tibetan, "en"); err != nil {
		t.Errorf("English with a Tibetan phrase: %v", err)
	}
}

func TestChoose(t *testing.T) {
	d := New(espeakLangs)
	tests := []struct {
		text, lang, want string
		unsupported      bool
	}{
		{"Hola", "es", "es", false},
		{"Olá", "pt-BR", "pt", false},
		{"Hello", "ja", "ja", false},
		{"Hello", "zh-Hans", "zh", false},
		{"Hello", "cmn", "zh", false},
		{"Hello", " ES ", "es", false},
		{"Hello", "xx", "", true},
		{"Hello", "zu", "", true},
		{"བོད་ཀྱི་སྐད་ཡིག་ནི་བོད་ཀྱི", "es", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			r, err := d.Choose(tt.text, tt.lang)
			if tt.unsupported {
				if !errors.Is(err, ErrUnsupported) {
					t.Errorf("got %+v, %v; want unsupported", r, err)
				}
				return
			}
			if err != nil || r.Language != tt.want || r.Detected || len(r.Spans) != 1 || r.Spans[0].Language != tt.want {
				t.Errorf("got %+v, %v; want %s", r, err, tt.want)
			}
		})
	}
}

// An engine that lists Norwegian as "no" (OpenAI) still gets whatlanggo's "nb".
func TestDetectAliases(t *testing.T) {
	d := New([]string{"en", "no", "sv"})
	text := "Jeg heter Kari og bor i en liten by ved sjøen. Hver morgen går jeg en tur langs stranden før jobben, og om kvelden leser jeg bøker."
	r, err := d.Detect(text, "en")
	if err != nil || r.Language != "no" {
		t.Errorf("got %+v, %v; want no", r, err)
	}
	// A confident detection of a language this engine lacks is refused.
	if _, err := d.Detect(corpusText(t, "ru"), "en"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Russian on an engine without it: %v", err)
	}
}

// A paragraph surely in a language the engine lacks is read with its neighbours' language
// when it is a small part of the text; a text mostly in such languages is refused.
func TestDetectForeignParagraphs(t *testing.T) {
	d := New(espeakLangs) // espeak-ng has no Zulu
	zulu := "Ngiyabonga kakhulu ngosizo lwakho. Sizohamba ekuseni kusasa siye edolobheni ukuyothenga ukudla nezingubo zezingane.\n" +
		"Abantu bonke bazalwa bekhululekile futhi belingana ngesithunzi nangamalungelo. Bahlanganiswe ngumcabango nangunembeza."
	en := corpusText(t, "en")
	r, err := d.Detect(en+"\n"+en+"\n"+zulu+"\n"+en, "en")
	if err != nil || r.Language != "en" || len(r.Spans) != 1 {
		t.Errorf("English with a Zulu paragraph: %+v, %v", r, err)
	}
	var ue *UnsupportedError
	if _, err := d.Detect(zulu+"\n"+zulu+"\n"+en, "en"); !errors.As(err, &ue) || ue.Language != "zu" {
		t.Errorf("mostly Zulu: %v, want zu unsupported", err)
	}
}
