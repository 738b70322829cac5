package openai

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"parla/providers"
)

// productGender is each product voice's gender, as the espeak-ng engine keeps it (alloy as
// Kokoro's own af_alloy).
var productGender = map[string]byte{"alloy": 'f', "echo": 'm', "fable": 'm', "onyx": 'm', "nova": 'f', "shimmer": 'f'}

// TestKokoroVoiceMap: the shipped map gives every product voice a Kokoro voice in every
// language Kokoro speaks, a voice of that language, of the product voice's gender where the
// language has both, at least three distinct voices where it has three, and Kokoro's own
// namesakes in English.
func TestKokoroVoiceMap(t *testing.T) {
	m := kokoroMap(t)
	if got := m.Languages(); !slices.Equal(got, slices.Sorted(maps.Keys(kokoroVoices))) {
		t.Errorf("languages %v, want Kokoro's %v", got, slices.Sorted(maps.Keys(kokoroVoices)))
	}
	for lang, catalogue := range kokoroVoices {
		genders := map[byte]bool{}
		for _, v := range catalogue {
			genders[v[1]] = true
		}
		distinct := map[string]bool{}
		for _, voice := range providers.Voices {
			got := m.Resolve(voice, lang)
			distinct[got] = true
			switch {
			case !slices.Contains(catalogue, got):
				t.Errorf("%s %s → %q: not a Kokoro voice of that language", lang, voice, got)
			case len(genders) == 2 && got[1] != productGender[voice]:
				t.Errorf("%s %s → %s: the gender changes", lang, voice, got)
			}
		}
		if want := min(3, len(catalogue)); len(distinct) < want {
			t.Errorf("%s: %d distinct voices, want at least %d", lang, len(distinct), want)
		}
	}
	for voice, want := range map[string]string{"alloy": "af_alloy", "echo": "am_echo", "fable": "bm_fable", "onyx": "am_onyx", "nova": "af_nova"} {
		if got := m.Resolve(voice, "en"); got != want {
			t.Errorf("English %s → %s, want Kokoro's namesake %s", voice, got, want)
		}
	}
	if m.Resolve("onyx", "") != "am_onyx" || m.Resolve("onyx", "tr") != "onyx" {
		t.Errorf("no language → English; a language the map lacks → the name itself")
	}
	if m, err := ShippedVoices("tts-1"); m != nil || err != nil {
		t.Errorf("tts-1 has no map: %v %v", m, err)
	}
}

// TestParseVoices: OPENAI_TTS_VOICES's entries over the shipped map, and the refusals
// that name what is wrong.
func TestParseVoices(t *testing.T) {
	kokoro := kokoroMap(t)
	tests := []struct {
		name, spec string
		base       VoiceMap
		want       map[[2]string]string // {voice, language} → server voice
		err        string
	}{
		{"empty", "", kokoro, map[[2]string]string{{"nova", "es"}: "ef_dora", {"nova", "en"}: "af_nova"}, ""},
		{"one language's voice", "es:nova=em_santa, en:shimmer=bf_alice", kokoro,
			map[[2]string]string{{"nova", "es"}: "em_santa", {"shimmer", "en"}: "bf_alice", {"shimmer", "es"}: "ef_dora"}, ""},
		{"every language, then one", "nova=af_heart,fr:nova=ff_siwis", kokoro,
			map[[2]string]string{{"nova", "es"}: "af_heart", {"nova", "fr"}: "ff_siwis", {"nova", "tr"}: "af_heart"}, ""},
		{"a model without a map", "alloy=en_US-amy-medium,ECHO=en_US-ryan-high", nil,
			map[[2]string]string{{"alloy", "de"}: "en_US-amy-medium", {"echo", ""}: "en_US-ryan-high", {"fable", "de"}: "fable"}, ""},
		{"a new language, all six", "de:alloy=a,de:echo=b,de:fable=c,de:onyx=d,de:nova=e,de:shimmer=f", nil,
			map[[2]string]string{{"onyx", "de"}: "d", {"onyx", "fr"}: "onyx"}, ""},
		{"a new language over voices for all", "alloy=x,echo=x,fable=x,onyx=x,nova=x,shimmer=x,de:nova=e", nil,
			map[[2]string]string{{"nova", "de"}: "e", {"alloy", "de"}: "x"}, ""},
		{"a new language, short", "tr:alloy=tr_voice", kokoro, nil, "tr names no voice for echo, fable, onyx, nova, shimmer"},
		{"no equals sign", "alloy", nil, nil, `"alloy": want voice=name`},
		{"not a product voice", "coral=af_heart", nil, nil, `"coral" is none of the voices`},
		{"not a language", "spanish:nova=ef_dora", kokoro, nil, `"spanish" is no language code`},
		{"not a voice name", "nova=af heart", nil, nil, `"af heart" is no voice name`},
		{"twice", "nova=a,nova=b", nil, nil, "nova is named twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseVoices(tt.spec, tt.base)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				if got := m.Resolve(k[0], k[1]); got != want {
					t.Errorf("%s in %q → %s, want %s", k[0], k[1], got, want)
				}
			}
		})
	}
	if kokoro.Resolve("nova", "es") != "ef_dora" {
		t.Error("ParseVoices changed the map it was given")
	}
}

// TestParseLanguages: OPENAI_TTS_LANGUAGES names the languages the engine speaks, within
// its voice map's when it has one.
func TestParseLanguages(t *testing.T) {
	kokoro := kokoroMap(t)
	tests := []struct {
		spec   string
		voices VoiceMap
		want   []string
		err    string
	}{
		{"en, ES,de,en", nil, []string{"en", "es", "de"}, ""},
		{"es,fr", kokoro, []string{"es", "fr"}, ""},
		{"", kokoro, nil, ""},
		{"en,tr", kokoro, nil, "tr has no voices in the voice map"},
		{"english", nil, nil, `"english" is no language code`},
	}
	for _, tt := range tests {
		got, err := ParseLanguages(tt.spec, tt.voices)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%q: %v, %v; want %v", tt.spec, got, err, tt.want)
		}
	}
	s := NewSpeaker(Config{BaseURL: "http://kokoro:8880/v1", Voices: kokoro, Languages: []string{"es", "en"}})
	if got := s.Languages(); !slices.Equal(got, []string{"en", "es"}) {
		t.Errorf("Languages() = %v, want the given en, es", got)
	}
}

// TestLabel: the name visitors read for the engine.
func TestLabel(t *testing.T) {
	for _, tt := range []struct{ base, model, want string }{
		{"", "", "OpenAI"},
		{"", "gpt-4o-mini-tts", "OpenAI"},
		{"http://kokoro:8880/v1", "kokoro", "Kokoro"},
		{"http://kokoro:8880/v1", "Kokoro", "Kokoro"},
		{"http://speaches:8000/v1", "piper,en", "piper en"},
	} {
		if got := NewSpeaker(Config{BaseURL: tt.base, Model: tt.model}).Label(); got != tt.want {
			t.Errorf("Label of %s at %q = %q, want %q", tt.model, tt.base, got, tt.want)
		}
	}
}
