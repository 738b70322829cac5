package orders

import (
	"errors"
	"testing"

	"parla/providers/speechlang"
)

func TestQuoteSpeechLanguage(t *testing.T) {
	cfg := Config{TTS: TTSLimits{MaxChars: 1000}}
	cfg.defaults()
	engine := &Desk{cfg: cfg, languages: speechlang.New([]string{"ar", "en", "es", "ja", "ru", "zh"})}
	bare := &Desk{cfg: cfg} // an engine that names no languages
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
		{"too long", engine, string(make([]byte, 1001)), "", "en", "", false, false, "text_too_long"},
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
