package api

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/providers"
	"parla/providers/texts"
)

// sampleCache produces each voice's sample once per interface language with the
// configured engine and keeps it on disk, so a visitor hears the voice they will pay for,
// in their own language.
type sampleCache struct {
	dir     string
	speaker providers.Speaker
	mu      sync.Mutex
	locks   map[string]*sync.Mutex
}

func newSampleCache(dir string, speaker providers.Speaker) *sampleCache {
	return &sampleCache{dir: dir, speaker: speaker, locks: map[string]*sync.Mutex{}}
}

func (sc *sampleCache) lock(voice string) *sync.Mutex {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.locks[voice] == nil {
		sc.locks[voice] = &sync.Mutex{}
	}
	return sc.locks[voice]
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
// first if needed.
func (sc *sampleCache) path(ctx context.Context, voice, locale string, languages []string) (string, error) {
	key, lang, text := sc.sample(voice, locale, languages)
	p := filepath.Join(sc.dir, key+".mp3")
	l := sc.lock(key)
	l.Lock()
	defer l.Unlock()
	if st, err := os.Stat(p); err == nil && st.Size() > 0 {
		return p, nil
	}
	var buf bytes.Buffer
	if len(languages) == 0 {
		lang = "" // an engine that names no languages speaks its default
	}
	err := sc.speaker.Speak(ctx, providers.SpeechRequest{Voice: voice, Text: text, Format: "mp3", Speed: 1, Language: lang}, &buf)
	if err != nil {
		return "", fmt.Errorf("producing the %s sample: %w", key, err)
	}
	if err := os.MkdirAll(sc.dir, 0o755); err != nil {
		return "", fmt.Errorf("creating sample cache: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("caching the %s sample: %w", key, err)
	}
	return p, os.Rename(tmp, p)
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
	p, err := s.samples.path(ctx, voice, locale, s.deps.Book.Desk.SpeechLanguages())
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=86400")
	c.Type("mp3")
	return c.SendFile(p)
}
