package openai

import (
	"slices"
	"strings"

	"parla/providers"
)

// SpeechLanguages are the languages OpenAI's text-to-speech documents as supported
// (platform.openai.com/docs/guides/text-to-speech, "Supported languages": the Whisper
// list it follows), as ISO 639-1 codes. The voices are tuned for English; the API takes no
// language parameter and reads the text in the language it is written in.
var SpeechLanguages = []string{
	"af", "ar", "hy", "az", "be", "bs", "bg", "ca", "zh", "hr", "cs", "da", "nl", "en", "et",
	"fi", "fr", "gl", "de", "el", "he", "hi", "hu", "is", "id", "it", "ja", "kn", "kk", "ko",
	"lv", "lt", "mk", "ms", "mr", "mi", "ne", "no", "fa", "pl", "pt", "ro", "ru", "sr", "sk",
	"sl", "es", "sw", "sv", "tl", "ta", "th", "tr", "uk", "ur", "vi", "cy",
}

// The engines' optional capabilities (providers.go); client.go's service gives both
// engines Check and BaseURL.
var (
	_ providers.LanguageLister     = (*Speaker)(nil)
	_ providers.Labeler            = (*Speaker)(nil)
	_ providers.ServerChecker      = (*Speaker)(nil)
	_ providers.ServerChecker      = (*Transcriber)(nil)
	_ providers.TranslationChecker = (*Transcriber)(nil)
)

// Languages returns the codes of the languages the engine speaks, sorted: those it was
// given (OPENAI_TTS_LANGUAGES), else those its voice map names (a known model's, such as
// Kokoro's eight), else OpenAI's list.
func (s *Speaker) Languages() []string {
	if len(s.langs) > 0 {
		return slices.Sorted(slices.Values(s.langs))
	}
	if l := s.voices.Languages(); len(l) > 0 {
		return l
	}
	l := slices.Clone(SpeechLanguages)
	slices.Sort(l)
	return l
}

// modelLabels are the names visitors read for known models' voices.
var modelLabels = map[string]string{"kokoro": "Kokoro"}

// Label is the engine's name as visitors read it: a known model's ("Kokoro"), "OpenAI"
// on OpenAI's own API, else the model as configured (without commas, which separate
// names in the preview's X-Preview-Engines).
func (s *Speaker) Label() string {
	if l, ok := modelLabels[strings.ToLower(s.model)]; ok {
		return l
	}
	if s.server.base == DefaultBaseURL {
		return "OpenAI"
	}
	return strings.ReplaceAll(s.model, ",", " ")
}
