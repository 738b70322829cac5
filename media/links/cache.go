package links

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// Analyses of the same link are answered from memory for a short while, refusals
// included: a visitor (or many) sending one link over and over costs one analysis. Two
// analyses of one link at once share the first one's work.

// Defaults for a Cached resolver.
const (
	defaultCacheFor     = 60 * time.Second
	defaultCacheEntries = 4096
)

// Cached is a Resolver whose analyses are kept for CacheFor (at most Entries of them;
// the oldest go first when it is full). What an analysis ends with because its visitor
// left (a cancelled context) is not kept.
type Cached struct {
	*Resolver
	// CacheFor is how long an analysis is kept. Default 60 s.
	CacheFor time.Duration
	// Entries bounds the analyses kept. Default 4096.
	Entries int
	// Now is the clock; default time.Now.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]*analysis
	order   []kept // in the order they were added, for eviction
}

// kept is an entry of Cached.order: stale once entries[key] is another analysis.
type kept struct {
	key string
	a   *analysis
}

// analysis is one kept (or running) analysis: done closes once info and err are set.
type analysis struct {
	done chan struct{}
	info LinkInfo
	err  error
	at   time.Time
}

// NewCached keeps r's analyses for the default time and number.
func NewCached(r *Resolver) *Cached { return &Cached{Resolver: r} }

func (c *Cached) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Analyze is Resolver.Analyze, answered from the cache when the same link was analysed
// less than CacheFor ago.
func (c *Cached) Analyze(ctx context.Context, raw string) (LinkInfo, error) {
	key := strings.TrimSpace(raw)
	for {
		a, leader := c.lookup(key)
		if leader {
			a.info, a.err = c.Resolver.Analyze(ctx, raw)
			c.finish(key, a, ctx.Err() != nil || errors.Is(a.err, context.Canceled))
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
		// The first visitor left before its analysis ended: analyse it for this one.
	}
}

// lookup returns the analysis kept or running for key, or a new one that the caller
// (leader) must run and finish.
func (c *Cached) lookup(key string) (*analysis, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*analysis{}
	}
	now := c.now()
	if a, ok := c.entries[key]; ok {
		select {
		case <-a.done:
			if now.Sub(a.at) < c.cacheFor() {
				return a, false
			}
			delete(c.entries, key)
		default:
			return a, false // running
		}
	}
	c.evict(now)
	a := &analysis{done: make(chan struct{})}
	c.entries[key] = a
	c.order = append(c.order, kept{key, a})
	return a, true
}

// finish publishes a's result; forget drops it instead of keeping it (the visitor left).
func (c *Cached) finish(key string, a *analysis, forget bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if forget {
		delete(c.entries, key)
	} else {
		a.at = c.now()
	}
	close(a.done)
}

// evict makes room for one more entry: the expired ones go, then the oldest finished.
// Running analyses stay (their number is bounded by the visitors' pool and the rate limits).
func (c *Cached) evict(now time.Time) {
	limit := c.Entries
	if limit <= 0 {
		limit = defaultCacheEntries
	}
	if len(c.order) < limit && len(c.order) < 2*len(c.entries)+16 {
		return
	}
	left := c.order[:0]
	for _, k := range c.order {
		if c.entries[k.key] != k.a {
			continue // dropped, or replaced by a later analysis
		}
		select {
		case <-k.a.done:
			if now.Sub(k.a.at) >= c.cacheFor() || len(c.entries) >= limit {
				delete(c.entries, k.key)
				continue
			}
		default:
		}
		left = append(left, k)
	}
	clear(c.order[len(left):])
	c.order = left
}

func (c *Cached) cacheFor() time.Duration {
	if c.CacheFor > 0 {
		return c.CacheFor
	}
	return defaultCacheFor
}
