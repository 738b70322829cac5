package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
	"parla/providers"
)

// previewCacheBytes bounds the previews kept on disk; the least recently used go first.
const previewCacheBytes = 64 << 20

// previewCache keeps the free previews on disk, by a hash of who asked and what is spoken
// and how, so a visitor pressing Preview again costs no engine time. Another visitor's
// same text is made anew: a preview found made would tell, by its speed, what someone
// else previewed.
type previewCache struct {
	dir    string
	limit  int64
	speech *speechCache
	trimMu sync.Mutex // one trim at a time
}

func newPreviewCache(dir string, speaker providers.Speaker) *previewCache {
	return &previewCache{dir: dir, limit: previewCacheBytes, speech: &speechCache{dir: dir, speaker: speaker, touch: true}}
}

// previewKey names a preview by its client (orders.ClientKey: an IPv4 address, an IPv6
// /64), its text, voice, speed, format and language(s), and the engines that speak it
// (another engine open, another preview).
func previewKey(client string, r providers.SpeechRequest, engines []string) string {
	h := sha256.New()
	for _, part := range []string{client, r.Text, r.Voice, strconv.FormatFloat(r.Speed, 'g', -1, 64), r.Format, r.Language,
		strconv.FormatBool(r.DetectParagraphs), strings.Join(engines, ",")} {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// path returns client's cached preview, producing it first if needed; cached says it was.
func (pc *previewCache) path(ctx context.Context, client string, pv orders.Preview) (p string, cached bool, err error) {
	p, cached, err = pc.speech.file(ctx, previewKey(client, pv.Speech, pv.Engines)+"."+pv.Ext, pv.Speech, "a preview")
	if err == nil && !cached {
		pc.trim(p)
	}
	return p, cached, err
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
	p, _, err := s.previews.path(ctx, s.clientOf(c), pv)
	if err != nil {
		return err
	}
	c.Set("X-Preview-Characters", strconv.Itoa(len([]rune(req.Text))))
	if req.Language != "" {
		c.Set("X-Preview-Language", req.Language)
	}
	if len(pv.Engines) > 0 { // several engines: which spoke it
		c.Set("X-Preview-Engines", strings.Join(pv.Engines, ", "))
	}
	c.Set(fiber.HeaderCacheControl, "private, max-age=3600")
	c.Set(fiber.HeaderContentType, pv.ContentType)
	return c.SendFile(p)
}
