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
)

// sampleCache produces each voice's sample once with the configured engine and keeps it
// on disk, so a visitor hears the voice they will pay for.
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

// sampleText is what every voice says; English, as the voices are English voices.
func sampleText(voice string) string {
	name := strings.ToUpper(voice[:1]) + voice[1:]
	return fmt.Sprintf("Hello! I am %s, one of the six voices of Parla. "+
		"This is how your text will sound when you order it.", name)
}

// path returns the cached sample of a voice, producing it first if needed.
func (sc *sampleCache) path(ctx context.Context, voice string) (string, error) {
	p := filepath.Join(sc.dir, voice+".mp3")
	l := sc.lock(voice)
	l.Lock()
	defer l.Unlock()
	if st, err := os.Stat(p); err == nil && st.Size() > 0 {
		return p, nil
	}
	var buf bytes.Buffer
	err := sc.speaker.Speak(ctx, providers.SpeechRequest{Voice: voice, Text: sampleText(voice), Format: "mp3", Speed: 1}, &buf)
	if err != nil {
		return "", fmt.Errorf("producing the %s sample: %w", voice, err)
	}
	if err := os.MkdirAll(sc.dir, 0o755); err != nil {
		return "", fmt.Errorf("creating sample cache: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("caching the %s sample: %w", voice, err)
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
	p, err := s.samples.path(ctx, voice)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=86400")
	c.Type("mp3")
	return c.SendFile(p)
}
