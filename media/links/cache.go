package links

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"parla/media"
)

// Analyses of the same link by the same client are answered from memory for a short
// while, refusals included: a visitor sending one link over and over costs one analysis,
// and two analyses of it at once share the first one's work. Each client has its own
// entries, so another visitor's same link is analysed anew: neither the answer nor its
// time tells one visitor what another analysed.
//
// A link is checked (its length first, then its form) before the cache is looked at, and
// kept under the SHA-256 of the client and the normalised link: an entry's size does not
// grow with what a visitor sends. The cache is bounded by age and by bytes.

// Defaults for a Cached resolver.
const (
	defaultCacheFor = 60 * time.Second
	// An entry is a few hundred bytes (a 2,048-character link and a title at most): 4 MiB
	// is some ten thousand analyses.
	defaultCacheBytes int64 = 4 << 20
	// entryOverhead is what an entry costs besides its strings: the key, the map's and
	// the order's slots, the analysis itself.
	entryOverhead = 256
)

// Cached is a Resolver whose analyses are kept for CacheFor, per client, in at most
// MaxBytes (the oldest go first when it is full). What an analysis ends with because its
// visitor left (a cancelled context) or because the visitors' pool was busy
// (media.ErrVisitorsBusy) is not kept: neither says anything about the link.
type Cached struct {
	*Resolver
	// CacheFor is how long an analysis is kept. Default 60 s.
	CacheFor time.Duration
	// MaxBytes bounds the memory the kept analyses take, as counted by entrySize. Default 4 MiB.
	MaxBytes int64
	// Now is the clock; default time.Now.
	Now func() time.Time

	mu      sync.Mutex
	entries map[cacheKey]*analysis
	order   []kept // in the order they were added, for eviction
	bytes   int64  // the entries' sizes, summed
}

// cacheKey is the SHA-256 of a client and a normalised link.
type cacheKey [sha256.Size]byte

// kept is an entry of Cached.order: stale once entries[key] is another analysis.
type kept struct {
	key cacheKey
	a   *analysis
}

// analysis is one kept (or running) analysis: done closes once info and err are set.
type analysis struct {
	done chan struct{}
	info LinkInfo
	err  error
	at   time.Time
	size int64
}

// NewCached keeps r's analyses for the default time and bytes.
func NewCached(r *Resolver) *Cached { return &Cached{Resolver: r} }

func (c *Cached) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Analyze is Resolver.Analyze for client (one IPv4 address or one IPv6 /64, as the
// caller counts visitors), answered from the cache when the same client analysed the same
// link less than CacheFor ago. A link that fails the checks made before reading anything
// (too long, not a link we read) is refused at once and never kept.
func (c *Cached) Analyze(ctx context.Context, client, raw string) (LinkInfo, error) {
	link, err := c.Resolver.checkLink(raw)
	if err != nil {
		return LinkInfo{}, err
	}
	key := keyOf(client, link)
	for {
		a, leader := c.lookup(key)
		if leader {
			a.info, a.err = c.Resolver.Analyze(ctx, raw)
			forget := ctx.Err() != nil || errors.Is(a.err, context.Canceled) || errors.Is(a.err, media.ErrVisitorsBusy)
			c.finish(key, a, forget)
			return a.info, a.err
		}
		select {
		case <-a.done:
		case <-ctx.Done():
			return LinkInfo{}, ctx.Err()
		}
		if !a.at.IsZero() {
			return a.info, a.err
		}
		// The first analysis was not kept (its visitor left, the pool was busy): analyse it
		// for this one.
	}
}

// keyOf is the cache key of client's link: a hash, so a key's size never depends on them.
func keyOf(client, link string) cacheKey {
	h := sha256.New()
	h.Write([]byte(client))
	h.Write([]byte{0})
	h.Write([]byte(link))
	var k cacheKey
	h.Sum(k[:0])
	return k
}

// entrySize is what a finished analysis is counted as in MaxBytes.
func entrySize(info LinkInfo, err error) int64 {
	n := entryOverhead + len(info.Site) + len(info.URL) + len(info.ID) + len(info.Title)
	if err != nil {
		n += len(err.Error())
	}
	return int64(n)
}

// lookup returns the analysis kept or running for key, or a new one that the caller
// (leader) must run and finish.
func (c *Cached) lookup(key cacheKey) (*analysis, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[cacheKey]*analysis{}
	}
	now := c.now()
	if a, ok := c.entries[key]; ok {
		select {
		case <-a.done:
			if now.Sub(a.at) < c.cacheFor() {
				return a, false
			}
			c.drop(key, a)
		default:
			return a, false // running
		}
	}
	a := &analysis{done: make(chan struct{}), size: entryOverhead}
	c.entries[key] = a
	c.bytes += a.size
	c.order = append(c.order, kept{key, a})
	c.evict(now)
	return a, true
}

// finish publishes a's result; forget drops it instead of keeping it.
func (c *Cached) finish(key cacheKey, a *analysis, forget bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if forget {
		c.drop(key, a)
	} else if c.entries[key] == a {
		size := entrySize(a.info, a.err)
		c.bytes += size - a.size
		a.size = size
		a.at = c.now()
	}
	close(a.done)
	c.evict(c.now())
}

// drop removes key's entry if it is still a.
func (c *Cached) drop(key cacheKey, a *analysis) {
	if c.entries[key] == a {
		delete(c.entries, key)
		c.bytes -= a.size
	}
}

// evict drops the expired entries, and the oldest finished ones while the cache holds more
// than MaxBytes. Running analyses stay (their number is bounded by the visitors' pool and
// the rate limits). It walks the whole order only when something is to go.
func (c *Cached) evict(now time.Time) {
	limit := c.MaxBytes
	if limit <= 0 {
		limit = defaultCacheBytes
	}
	if c.bytes <= limit && len(c.order) < 2*len(c.entries)+16 && !c.oldestExpired(now) {
		return
	}
	left := c.order[:0]
	for _, k := range c.order {
		if c.entries[k.key] != k.a {
			continue // dropped, or replaced by a later analysis
		}
		select {
		case <-k.a.done:
			if now.Sub(k.a.at) >= c.cacheFor() || c.bytes > limit {
				c.drop(k.key, k.a)
				continue
			}
		default:
		}
		left = append(left, k)
	}
	clear(c.order[len(left):])
	c.order = left
}

// oldestExpired reports whether the first entry kept has outlived CacheFor.
func (c *Cached) oldestExpired(now time.Time) bool {
	for _, k := range c.order {
		if c.entries[k.key] != k.a {
			return true // a stale slot: worth a sweep
		}
		select {
		case <-k.a.done:
			return now.Sub(k.a.at) >= c.cacheFor()
		default:
		}
	}
	return false
}

func (c *Cached) cacheFor() time.Duration {
	if c.CacheFor > 0 {
		return c.CacheFor
	}
	return defaultCacheFor
}
