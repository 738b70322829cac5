package transcript

import "testing"

func TestLanguageNamesAndCodes(t *testing.T) {
	for code, want := range map[string]string{"en": "english", "ja": "japanese", "yue": "cantonese", "english": "english", "": ""} {
		if got := LanguageName(code); got != want {
			t.Errorf("LanguageName(%q) = %q, want %q", code, got, want)
		}
	}
	for name, want := range map[string]string{"english": "en", "English": "en", " german ": "de", "en": "en", "pt_BR": "pt",
		"zh-Hans": "zh", "castilian": "es", "mandarin": "zh", "cantonese": "yue", "haitian creole": "ht", "klingon": "", "": "", "xx": ""} {
		if got := LanguageCode(name); got != want {
			t.Errorf("LanguageCode(%q) = %q, want %q", name, got, want)
		}
	}
}
