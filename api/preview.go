package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
	"parla/providers"
)

// previewCacheBytes bounds the previews kept on disk; the least recently used go first.
const previewCacheBytes = 64 << 20

// previewCache keeps the free previews on disk, by a hash of what is spoken and how, so
// a visitor pressing Preview again (or another with the same text) costs no engine time.
type previewCache struct {
	dir     string
	limit   int64
	speaker providers.Speaker
	mu      sync.Mutex            // guards making
	making  map[string]*keyedLock // previews being looked up or produced, by key
	trimMu  sync.Mutex            // one trim at a time
}

// keyedLock makes requests for the same preview wait for one production; n counts them.
type keyedLock struct {
	sync.Mutex
	n int
}

func newPreviewCache(dir string, speaker providers.Speaker) *previewCache {
	return &previewCache{dir: dir, limit: previewCacheBytes, speaker: speaker, making: map[string]*keyedLock{}}
}

// lock takes the lock of one preview; the returned func releases it.
func (pc *previewCache) lock(key string) func() {
	pc.mu.Lock()
	l := pc.making[key]
	if l == nil {
		l = &keyedLock{}
		pc.making[key] = l
	}
	l.n++
	pc.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		pc.mu.Lock()
		if l.n--; l.n == 0 {
			delete(pc.making, key)
		}
		pc.mu.Unlock()
	}
}

// previewKey names a preview by its text, voice, speed, format and language.
func previewKey(r providers.SpeechRequest) string {
	h := sha256.New()
	for _, part := range []string{r.Text, r.Voice, strconv.FormatFloat(r.Speed, 'g', -1, 64), r.Format, r.Language} {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// path returns the cached preview, producing it first if needed; cached says it was.
func (pc *previewCache) path(ctx context.Context, r providers.SpeechRequest, ext string) (p string, cached bool, err error) {
	key := previewKey(r)
	p = filepath.Join(pc.dir, key+"."+ext)
	defer pc.lock(key)()
	if st, err := os.Stat(p); err == nil && st.Size() > 0 {
		now := time.Now()
		_ = os.Chtimes(p, now, now) // recently used
		return p, true, nil
	}
	var buf bytes.Buffer
	if err := pc.speaker.Speak(ctx, r, &buf); err != nil {
		return "", false, fmt.Errorf("producing a preview: %w", err)
	}
	if err := os.MkdirAll(pc.dir, 0o755); err != nil {
		return "", false, fmt.Errorf("creating preview cache: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return "", false, fmt.Errorf("caching a preview: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", false, err
	}
	pc.trim(p)
	return p, false, nil
}

// trim deletes the least recently used previews until the cache fits its limit, keeping
// the one just made.
func (pc *previewCache) trim(keep string) {
	pc.trimMu.Lock()
	defer pc.trimMu.Unlock()
	entries, err := os.ReadDir(pc.dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		size int64
		used time.Time
	}
	var files []file
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		files = append(files, file{filepath.Join(pc.dir, e.Name()), info.Size(), info.ModTime()})
		total += info.Size()
	}
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	for _, f := range files {
		if total <= pc.limit {
			break
		}
		if f.path == keep {
			continue
		}
		if os.Remove(f.path) == nil {
			total -= f.size
		}
	}
}

// ttsPreview speaks the start of the visitor's text (orders.PreviewText) in the voice,
// speed, format and language of the order, free, before payment.
func (s orderHandlers) ttsPreview(c *fiber.Ctx) error {
	var body struct {
		Text     string  `json:"text"`
		Voice    string  `json:"voice"`
		Speed    float64 `json:"speed"`
		Format   string  `json:"format"`
		Language string  `json:"language"`
		Locale   string  `json:"locale"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if body.Speed == 0 {
		body.Speed = 1
	}
	pv, err := s.deps.Book.Desk.SpeechPreview(orders.PreviewRequest{
		Params:   orders.TTSParams{Voice: body.Voice, Speed: body.Speed, Format: body.Format, Text: body.Text},
		Language: body.Language, Locale: body.Locale,
	})
	if err != nil {
		return err
	}
	if s.deps.Speaker == nil {
		return fail("service_unavailable", "text-to-speech is not available right now")
	}
	req := pv.Speech
	ctx, cancel := context.WithTimeout(c.UserContext(), 30*time.Second)
	defer cancel()
	p, cached, err := s.previews.path(ctx, req, pv.Ext)
	if err != nil {
		return err
	}
	c.Set("X-Preview-Cached", strconv.FormatBool(cached))
	c.Set("X-Preview-Characters", strconv.Itoa(len([]rune(req.Text))))
	if req.Language != "" {
		c.Set("X-Preview-Language", req.Language)
	}
	c.Set(fiber.HeaderCacheControl, "private, max-age=3600")
	c.Set(fiber.HeaderContentType, pv.ContentType)
	return c.SendFile(p)
}
