package openai

// Which of the server's voices reads each product voice in each language: a shipped map for
// a known model (voices/<model>.json), with OPENAI_TTS_VOICES over it.

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"parla/providers"
)

// VoiceMap names the server's voice for each product voice, per language: language code →
// product voice → server voice. The key allLanguages holds the voices set for every
// language (and for those the map does not name). An empty map sends the product voices
// as they are, as OpenAI takes them.
type VoiceMap map[string]map[string]string

// allLanguages is VoiceMap's key for entries without a language.
const allLanguages = "*"

//go:embed voices/*.json
var shippedVoices embed.FS

// ShippedVoices returns the voice map shipped for a known model (voices/<model>.json:
// "kokoro", Kokoro-82M behind Kokoro-FastAPI), or nil for another model.
func ShippedVoices(model string) (VoiceMap, error) {
	data, err := shippedVoices.ReadFile("voices/" + strings.ToLower(model) + ".json")
	if err != nil {
		return nil, nil // no map for this model: the names go as they are
	}
	var m VoiceMap
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the shipped voice map of %s: %w", model, err)
	}
	return m, nil
}

// Resolve is the server's voice for a product voice in a language (a code as
// speechlang.Normalize gives it; "" is English): the language's entry, else the entry for
// every language, else the product voice's own name.
func (m VoiceMap) Resolve(voice, lang string) string {
	if lang == "" {
		lang = "en"
	}
	if v, ok := m[lang][voice]; ok {
		return v
	}
	if v, ok := m[allLanguages][voice]; ok {
		return v
	}
	return voice
}

// Languages are the languages the map names, sorted; nil when it names none.
func (m VoiceMap) Languages() []string {
	var langs []string
	for l := range m {
		if l != allLanguages {
			langs = append(langs, l)
		}
	}
	slices.Sort(langs)
	return langs
}

// The forms of OPENAI_TTS_VOICES' parts.
var (
	voiceLanguage = regexp.MustCompile(`^[a-z]{2,3}$`)
	// Kokoro-FastAPI also takes mixes such as af_bella(2)+af_sky(1).
	serverVoice = regexp.MustCompile(`^[A-Za-z0-9_.+()\-]+$`)
)

// voiceEntry is one part of OPENAI_TTS_VOICES: [language:]voice=server voice.
type voiceEntry struct{ lang, voice, name string }

// ParseVoices reads OPENAI_TTS_VOICES over base (the shipped map, or nil): comma-separated
// entries "voice=name" (the server's voice for that product voice in every language) and
// "lang:voice=name" (in one language), e.g. "nova=af_heart,es:nova=ef_dora". Entries for
// every language are applied first. A language the result names must have all six voices
// (its own entries, the shipped ones or those for every language), so that no product
// voice falls back to a name the server reads in another language.
func ParseVoices(spec string, base VoiceMap) (VoiceMap, error) {
	m := VoiceMap{}
	for l, vs := range base {
		m[l] = maps.Clone(vs)
	}
	entries, err := voiceEntries(spec)
	if err != nil {
		return nil, err
	}
	// Entries for every language first, then each language's own.
	for _, e := range entries {
		if e.lang == allLanguages {
			for l := range m {
				m[l][e.voice] = e.name
			}
			if m[allLanguages] == nil {
				m[allLanguages] = map[string]string{e.voice: e.name}
			}
		}
	}
	for _, e := range entries {
		if e.lang != allLanguages {
			if m[e.lang] == nil {
				m[e.lang] = maps.Clone(m[allLanguages])
				if m[e.lang] == nil {
					m[e.lang] = map[string]string{}
				}
			}
			m[e.lang][e.voice] = e.name
		}
	}
	return m, incomplete(m)
}

// voiceEntries splits OPENAI_TTS_VOICES into its entries and checks each one's form.
func voiceEntries(spec string) ([]voiceEntry, error) {
	var entries []voiceEntry
	var errs []error
	seen := map[[2]string]bool{}
	for _, part := range strings.Split(spec, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		e, err := voiceEntryOf(part)
		if err == nil && seen[[2]string{e.lang, e.voice}] {
			err = fmt.Errorf("%q: %s is named twice", part, e.voice)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		seen[[2]string{e.lang, e.voice}] = true
		entries = append(entries, e)
	}
	return entries, errors.Join(errs...)
}

// voiceEntryOf reads one entry: [language:]voice=server voice.
func voiceEntryOf(part string) (voiceEntry, error) {
	left, name, ok := strings.Cut(part, "=")
	if !ok {
		return voiceEntry{}, fmt.Errorf("%q: want voice=name or language:voice=name, e.g. es:nova=ef_dora", part)
	}
	e := voiceEntry{lang: allLanguages, voice: strings.ToLower(strings.TrimSpace(left)), name: strings.TrimSpace(name)}
	if lang, voice, ok := strings.Cut(e.voice, ":"); ok {
		e.lang, e.voice = strings.TrimSpace(lang), strings.TrimSpace(voice)
		if !voiceLanguage.MatchString(e.lang) {
			return voiceEntry{}, fmt.Errorf("%q: %q is no language code (two or three letters, e.g. es)", part, e.lang)
		}
	}
	if !slices.Contains(providers.Voices, e.voice) {
		return voiceEntry{}, fmt.Errorf("%q: %q is none of the voices %s", part, e.voice, strings.Join(providers.Voices, ", "))
	}
	if !serverVoice.MatchString(e.name) {
		return voiceEntry{}, fmt.Errorf("%q: %q is no voice name (letters, digits, _ . + - ( ))", part, e.name)
	}
	return e, nil
}

// incomplete names the languages of m that lack a product voice.
func incomplete(m VoiceMap) error {
	var errs []error
	for _, l := range m.Languages() {
		var missing []string
		for _, v := range providers.Voices {
			if _, ok := m[l][v]; !ok {
				missing = append(missing, v)
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("%s names no voice for %s: a language needs all six (or give them for every language: voice=name)",
				l, strings.Join(missing, ", ")))
		}
	}
	return errors.Join(errs...)
}

// ParseLanguages reads OPENAI_TTS_LANGUAGES: comma-separated language codes (two or three
// letters, e.g. "en,es,de"), the languages the server speaks. With a voice map that names
// languages, each must be one of them: a language without its voices would be read by
// voices of another.
func ParseLanguages(spec string, voices VoiceMap) ([]string, error) {
	var langs []string
	var errs []error
	mapped := voices.Languages()
	for _, l := range strings.Split(spec, ",") {
		l = strings.ToLower(strings.TrimSpace(l))
		switch {
		case l == "":
		case !voiceLanguage.MatchString(l):
			errs = append(errs, fmt.Errorf("%q is no language code (two or three letters, e.g. es)", l))
		case len(mapped) > 0 && !slices.Contains(mapped, l):
			errs = append(errs, fmt.Errorf("%s has no voices in the voice map (%s); add them with OPENAI_TTS_VOICES=%s:alloy=…,%[1]s:echo=…",
				l, strings.Join(mapped, ", "), l))
		case !slices.Contains(langs, l):
			langs = append(langs, l)
		}
	}
	return langs, errors.Join(errs...)
}
