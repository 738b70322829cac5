package orders

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"parla/providers/speechlang"
)

func TestQuoteSpeechLanguage(t *testing.T) {
	cfg := Config{TTS: TTSLimits{MaxChars: 1000}}
	cfg.defaults()
	engine := &Desk{cfg: cfg, Readers: &Readers{languages: speechlang.New([]string{"ar", "en", "es", "ja", "ru", "zh"})}}
	bare := &Desk{cfg: cfg, Readers: &Readers{}} // an engine that names no languages
	spanish := "Esta mañana hacía frío, así que nos quedamos en casa leyendo libros."
	mixed := spanish + "\n" + "The weather was cold this morning, so we stayed at home and read many books."
	tests := []struct {
		name                 string
		desk                 *Desk
		text, chosen, locale string
		want                 string
		detected, mixed      bool
		code                 string
	}{
		{"detected", engine, spanish, "", "en", "es", true, false, ""},
		{"mixed paragraphs", engine, mixed, "", "en", "en", true, true, ""},
		{"chosen", engine, spanish, "ru", "en", "ru", false, false, ""},
		{"chosen BCP-47", engine, spanish, "es-MX", "en", "es", false, false, ""},
		{"cannot tell: interface language", engine, "yyyyyyyy", "", "es", "es", true, false, ""},
		{"cannot tell: jp is ja", engine, "東京", "", "jp", "ja", true, false, ""},
		{"chosen, not spoken", engine, spanish, "fr", "en", "", false, false, "language_unsupported"},
		{"script not read", engine, "ภาษาไทยเป็นภาษาราชการของประเทศไทย", "", "en", "", false, false, "language_unsupported"},
		{"too long", engine, strings.Repeat("a", 1001), "", "en", "", false, false, "text_too_long"},
		{"engine without languages", bare, spanish, "", "en", "", false, false, ""},
		{"engine without languages, chosen", bare, spanish, "es", "en", "", false, false, "language_unsupported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := tt.desk.QuoteSpeech(tt.text, tt.chosen, tt.locale)
			var ie *InputError
			if tt.code != "" {
				if !errors.As(err, &ie) || ie.Code != tt.code {
					t.Errorf("got %+v, %v; want %s", q, err, tt.code)
				}
				return
			}
			if err != nil || q.Language != tt.want || q.Detected != tt.detected || q.Mixed != tt.mixed || q.Amount != 99 {
				t.Errorf("got %+v, %v; want %s detected=%v mixed=%v", q, err, tt.want, tt.detected, tt.mixed)
			}
		})
	}
}

// TestReaders: with several engines, the quote and the preview say which engine reads
// which of the text's languages (the router's own EngineFor), and the price is the same
// whatever engine reads; with one engine they say nothing.
func TestReaders(t *testing.T) {
	cfg := Config{TTS: TTSLimits{MaxChars: 1000, Voices: []string{"nova"}, Formats: []string{"mp3"}, MinSpeed: 0.25, MaxSpeed: 4}}
	cfg.defaults()
	kokoro := map[string]bool{"en": true, "es": true}
	engineFor := func(l string) string {
		if kokoro[l] {
			return "Kokoro"
		}
		return "eSpeak NG"
	}
	langs := speechlang.New([]string{"en", "es", "tr"})
	two := &Desk{cfg: cfg, Readers: &Readers{languages: langs, engineFor: func() func(string) string { return engineFor }}, services: services{TTS: ttsProducer{&scriptedSpeaker{}}}}
	one := &Desk{cfg: cfg, Readers: &Readers{languages: langs}}
	if got := two.Readers.All(); !slices.EqualFunc(got, []Reader{{"Kokoro", []string{"en", "es"}}, {"eSpeak NG", []string{"tr"}}}, readerEqual) {
		t.Errorf("Readers.All = %+v", got)
	}
	if one.Readers.All() != nil {
		t.Error("one engine: Readers.All not nil")
	}
	english := "The weather was cold this morning, so we stayed at home and read many books.\n"
	turkish := "Bugün hava çok güzel, öğleden sonra parkta uzun bir yürüyüş yapacağız ve kitap okuyacağız.\n"
	spanish := "Esta mañana hacía frío, así que nos quedamos en casa leyendo muchos libros juntos.\n"
	q, err := two.QuoteSpeech(english+turkish+spanish, "", "en")
	want := []Reader{{"Kokoro", []string{"en", "es"}}, {"eSpeak NG", []string{"tr"}}}
	if err != nil || !slices.EqualFunc(q.Readers, want, readerEqual) {
		t.Errorf("quote of en, tr, es: %+v, %v; want readers %+v", q, err, want)
	}
	// The same number of characters costs the same, whatever engine reads them.
	tr, _ := two.QuoteSpeech(string([]rune(turkish)[:len(english)]), "", "en") // English is ASCII
	en, _ := two.QuoteSpeech(english, "", "en")
	if tr.Readers[0].Engine != "eSpeak NG" || en.Readers[0].Engine != "Kokoro" || tr.Amount != en.Amount || tr.Chars != en.Chars {
		t.Errorf("Turkish %+v, English %+v: want other engines, one price", tr, en)
	}
	if q, _ := one.QuoteSpeech(english+turkish, "", "en"); q.Readers != nil {
		t.Errorf("one engine: quote readers %+v", q.Readers)
	}
	pv, err := two.SpeechPreview(PreviewRequest{Params: TTSParams{Voice: "nova", Speed: 1, Format: "mp3", Text: turkish + english}, Locale: "en"})
	if err != nil || !slices.Equal(pv.Engines, []string{"eSpeak NG", "Kokoro"}) || !pv.Speech.DetectParagraphs {
		t.Errorf("preview of tr, en: %+v, %v; want both engines, each paragraph in its language", pv, err)
	}
}

func readerEqual(a, b Reader) bool {
	return a.Engine == b.Engine && slices.Equal(a.Languages, b.Languages)
}
