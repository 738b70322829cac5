package transcript

import "testing"

// RulesFor returns the subtitle rules of a language named by code ("ja", "zh-Hans",
// "pt_BR") or by name ("japanese"), or the default rules.
func RulesFor(language string) Rules {
	r, _ := lookupRules(language)
	return r
}

func TestRulesFor(t *testing.T) {
	tests := []struct {
		language, text string
		want           string // Rules.Language
		lineRunes      int
		cps            float64
	}{
		{"english", "", "en", 42, 17},
		{"en", "", "en", 42, 17},
		{"en-US", "", "en", 42, 17},
		{"Spanish", "", "es", 42, 17},
		{"russian", "", "ru", 39, 17},
		{"ru_RU", "", "ru", 39, 17},
		{"chinese", "", "zh", 16, 9},
		{"zh-Hans", "", "zh", 16, 9},
		{"japanese", "", "ja", 13, 4},
		{"ja", "", "ja", 13, 4},
		{"arabic", "", "ar", 42, 17},
		{"korean", "", "ko", 16, 12},
		// Unknown or missing: the script decides.
		{"", "Hello there.", "", 42, 17},
		{"klingon", "Привет.", "", 42, 17},
		{"", "東京タワーは、電波塔です。", "ja", 13, 4},
		{"", "北京的新地铁线路。", "zh", 16, 9},
		{"", "안녕하세요", "ko", 16, 12},
		{"", "", "", 42, 17},
	}
	for _, tt := range tests {
		r := rulesForText(tt.language, tt.text)
		if r.Language != tt.want || r.LineRunes != tt.lineRunes || r.MaxCPS != tt.cps {
			t.Errorf("rules for %q / %q: %s, %d a line, %v a second; want %s, %d, %v",
				tt.language, tt.text, r.Language, r.LineRunes, r.MaxCPS, tt.want, tt.lineRunes, tt.cps)
		}
		if r.Lines != 2 || r.MinDuration < minCue || r.MaxDuration != maxCue || r.MinGap != minGap {
			t.Errorf("rules for %q: common limits %+v", tt.language, r)
		}
	}
	// A known language's rules hold whatever the text.
	if r := rulesForText("english", "東京"); r.Language != "en" {
		t.Errorf("english with kanji: %s", r.Language)
	}
	// A segment in another kind of script takes its script's rules.
	if r := segmentRules(RulesFor("en"), "東京タワーは電波塔です"); r.Language != "ja" {
		t.Errorf("Japanese segment in English: %s", r.Language)
	}
	if r := segmentRules(RulesFor("ja"), "Thank you very much."); r.LineRunes != 42 {
		t.Errorf("English segment in Japanese: %d a line", r.LineRunes)
	}
	if r := segmentRules(RulesFor("ru"), "Привет, как дела?"); r.Language != "ru" {
		t.Errorf("Russian segment in Russian: %s", r.Language)
	}
}
