package api

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/providers"
	"parla/providers/texts"
)

// sampleCache produces each voice's sample once per interface language and engine and
// keeps it on disk, so a visitor hears the voice they will pay for, in their own language,
// from the engine that would read it now: with several engines (TTS_ENGINE=openai,espeak)
// the sample a fallback spoke while the first was down is not served once it is back.
type sampleCache struct {
	speech *speechCache
}

func newSampleCache(dir string, speaker providers.Speaker) *sampleCache {
	return &sampleCache{speech: &speechCache{dir: dir, speaker: speaker}}
}

// sample is what a voice says for an interface language: the text and its language. A
// locale the engine does not speak gets the English sample.
func (sc *sampleCache) sample(voice, locale string, languages []string) (key, lang, text string) {
	locale = texts.Locale(locale)
	lang = texts.LanguageCode(locale, false) // the language the engine speaks the sample in
	if lang != "en" && !slices.Contains(languages, lang) {
		locale, lang = "en", "en"
	}
	name := strings.ToUpper(voice[:1]) + voice[1:]
	return voice + "-" + locale, lang, strings.ReplaceAll(texts.In(locale).Get("sample.voice"), "{name}", name)
}

// path returns the cached sample of a voice in an interface language, producing it
// first if needed. engineFor names the engine that reads a language now ("" with one
// engine): the sample is kept under its name, which path returns.
func (sc *sampleCache) path(ctx context.Context, voice, locale string, languages []string, engineFor func(lang string) string) (p, engine string, err error) {
	key, lang, text := sc.sample(voice, locale, languages)
	if engine = engineFor(lang); engine != "" {
		key += "-" + fileName(engine)
	}
	if len(languages) == 0 {
		lang = "" // an engine that names no languages speaks its default
	}
	p, _, err = sc.speech.file(ctx, key+".mp3",
		providers.SpeechRequest{Voice: voice, Text: text, Format: "mp3", Speed: 1, Language: lang}, "the "+key+" sample")
	return p, engine, err
}

// fileName is an engine's name as it may appear in a file name: its letters and digits,
// lower-case ("eSpeak NG": "espeakng").
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return -1
	}, name)
}

func (s *server) voiceSample(c *fiber.Ctx) error {
	voice := strings.TrimSuffix(strings.ToLower(c.Params("voice")), ".mp3")
	if !slices.Contains(providers.Voices, voice) {
		return fail("not_found", "no such voice")
	}
	if s.deps.Speaker == nil || s.deps.Speaker.Available() != nil {
		return fail("service_unavailable", "text-to-speech is not available right now")
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), 30*time.Second)
	defer cancel()
	locale := c.Query("locale", "en")
	desk := s.deps.Book.Desk
	p, engine, err := s.samples.path(ctx, voice, locale, desk.Readers.Languages(), desk.Readers.Engine)
	if err != nil {
		return err
	}
	if engine != "" {
		// Several engines: the one that reads this language may change (the first one back
		// up), and the browser should ask again soon.
		c.Set(fiber.HeaderCacheControl, "public, max-age=600")
	} else {
		c.Set(fiber.HeaderCacheControl, "public, max-age=86400")
	}
	c.Type("mp3")
	return c.SendFile(p)
}
