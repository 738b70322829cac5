package api

// Rendered downloads of a transcript (another format, or the visitor's edit) are kept in
// memory per saved version of its text, with an ETag, and counted in a rate-limit bucket
// of their own: a 600,000-character edit costs a quarter of a second of CPU to render, and
// its link may be fetched over and over. The key holds the version the order row records
// (orders.Results.EditVersion, one more at every save and revert) and the result's storage
// key, so a save, a revert or a deletion on any node is never served stale: a download
// first finds the order by its token (a deleted or lapsed result answers 410 before the
// cache is looked at), then reads the version.

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
)

// Bounds of the render cache: what it may hold, and for how long.
const (
	renderCacheBytes = 64 << 20
	renderCacheFor   = 10 * time.Minute
	// renderBucketTimes: rendered downloads per client a minute, in RateLimits (the
	// editor's saves have 4 too).
	renderBucketTimes = 4
	// renderBucketClients bounds the bucket's table. A full table drops only clients whose
	// minute has passed (their bucket is full again); while none has, new clients share one
	// bucket (renderOverflow), so a flood of addresses never gives anyone a fresh budget.
	renderBucketClients = 10000
	renderOverflow      = "\x00overflow"
)

// renderKey names one rendering: the order, the version of its text, its stored result
// and the format.
type renderKey struct {
	order, resultKey, format string
	version                  int64
}

// rendered is a rendering kept.
type rendered struct {
	body              []byte
	name, contentType string
	etag              string
	at                time.Time
}

// renderCache is the server's cache of rendered downloads and their bucket. Its zero value
// is ready.
type renderCache struct {
	mu      sync.Mutex
	entries map[renderKey]*rendered
	order   []renderKey // oldest first
	bytes   int64

	clients   map[string]*renderBucket // by orders.ClientKey
	fullUntil time.Time                // a sweep of the full table freed nothing before then
}

// renderBucket is one client's count of rendered downloads in its minute.
type renderBucket struct {
	start time.Time
	n     int
}

// allow counts one rendered download of client's and reports whether it is within
// limit a minute (limit <= 0: no limit).
func (rc *renderCache) allow(client string, limit int, now time.Time) bool {
	if limit <= 0 {
		return true
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.clients == nil {
		rc.clients = map[string]*renderBucket{}
	}
	b, ok := rc.clients[client]
	if !ok {
		if !rc.makeRoom(now) {
			client = renderOverflow
		}
		if b = rc.clients[client]; b == nil {
			b = &renderBucket{start: now}
			rc.clients[client] = b
		}
	}
	if now.Sub(b.start) >= time.Minute {
		b.start, b.n = now, 0
	}
	b.n++
	return b.n <= limit
}

// makeRoom frees a place in a full table (rc.mu held) by dropping the clients whose minute
// has passed, and reports whether one is free. A sweep that frees nothing is not repeated
// before the earliest minute ends.
func (rc *renderCache) makeRoom(now time.Time) bool {
	if len(rc.clients) < renderBucketClients {
		return true
	}
	if now.Before(rc.fullUntil) {
		return false
	}
	var earliest time.Time
	for k, b := range rc.clients {
		end := b.start.Add(time.Minute)
		if !now.Before(end) {
			delete(rc.clients, k)
		} else if earliest.IsZero() || end.Before(earliest) {
			earliest = end
		}
	}
	if len(rc.clients) < renderBucketClients {
		return true
	}
	rc.fullUntil = earliest
	return false
}

func (rc *renderCache) get(k renderKey, now time.Time) (*rendered, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	r, ok := rc.entries[k]
	if !ok || now.Sub(r.at) >= renderCacheFor {
		return nil, false
	}
	return r, true
}

func (rc *renderCache) put(k renderKey, r *rendered) {
	size := int64(len(r.body))
	if size > renderCacheBytes/4 {
		return // one rendering may not push out everything else
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.entries == nil {
		rc.entries = map[renderKey]*rendered{}
	}
	if old, ok := rc.entries[k]; ok {
		rc.bytes -= int64(len(old.body))
	} else {
		rc.order = append(rc.order, k)
	}
	rc.entries[k] = r
	rc.bytes += size
	// Oldest first: out while over the bytes or past its time; a key the order still names
	// but the map no longer holds is dropped from the order.
	for len(rc.order) > 0 {
		oldest := rc.order[0]
		e, ok := rc.entries[oldest]
		if ok && rc.bytes <= renderCacheBytes && r.at.Sub(e.at) < renderCacheFor {
			break
		}
		rc.order = rc.order[1:]
		if ok {
			rc.bytes -= int64(len(e.body))
			delete(rc.entries, oldest)
		}
	}
}

// etagOf is the entity tag of a rendering: it changes with the version of the text.
func etagOf(k renderKey) string {
	sum := sha256.Sum256([]byte(k.order + "\x00" + k.resultKey + "\x00" + k.format + "\x00" + strconv.FormatInt(k.version, 10)))
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// cachedRender is Results.OtherFormat through the cache, within the client's bucket of
// rendered downloads. It answers 304 itself (done) when the request's If-None-Match
// names the current rendering.
func (s linkHandlers) cachedRender(c *fiber.Ctx, o orders.Order, format string) (r *rendered, done bool, err error) {
	now := time.Now()
	if !s.renders.allow(s.clientOf(c), renderBucketTimes*s.cfg.RateLimit, now) {
		return nil, true, fail("rate_limited", "too many requests; try again in a minute")
	}
	version, err := s.deps.Book.Results.EditVersion(c.UserContext(), o.ID)
	if err != nil {
		return nil, true, err
	}
	k := renderKey{order: o.ID, resultKey: o.ResultKey, format: format, version: version}
	etag := etagOf(k)
	if match := c.Get(fiber.HeaderIfNoneMatch); match != "" && match == etag {
		c.Set(fiber.HeaderETag, etag)
		return nil, true, c.SendStatus(fiber.StatusNotModified)
	}
	if r, ok := s.renders.get(k, now); ok {
		return r, false, nil
	}
	body, name, contentType, err := s.deps.Book.Results.OtherFormat(c.UserContext(), o, format)
	if err != nil {
		return nil, false, err
	}
	r = &rendered{body: body, name: name, contentType: contentType, etag: etag, at: now}
	s.renders.put(k, r)
	return r, false, nil
}
