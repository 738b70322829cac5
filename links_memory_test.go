package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestLongLinksDoNotGrowTheServer: issue 40's finding — 400 analyses of one-megabyte links
// grew the server by 621 MB, each link kept whole as the analyses' cache key with its
// refusal. Through the real handler, 400 such links (each different, as an attacker sends
// them) grow the heap by at most 64 MB; each is refused as an unsupported link.
func TestLongLinksDoNotGrowTheServer(t *testing.T) {
	h := startApp(t, startFakeOpenAI(t).env())
	const links, size = 400, 1_000_000
	send := func(i int) {
		link := fmt.Sprintf("https://example.com/%d/", i) + strings.Repeat("a", size)
		body, err := json.Marshal(map[string]string{"video": link})
		if err != nil {
			t.Fatal(err)
		}
		r := h.do("POST", "/services/vtt/analyzevideo", "application/json", body, nil)
		if r.status != 400 || !bytes.Contains(r.body, []byte("unsupported_link")) {
			t.Fatalf("a one-megabyte link: %d %.200s; want 400 unsupported_link", r.status, r.body)
		}
	}
	send(-1) // the first request builds what every later one shares
	before := heapAfterGC()
	for i := range links {
		send(i)
	}
	grown := heapAfterGC() - before
	t.Logf("%d links of %d bytes grew the heap by %.1f MB", links, size, float64(grown)/1e6)
	if grown > 64<<20 {
		t.Errorf("%d links of %d bytes grew the heap by %.1f MB; want at most 64 MB", links, size, float64(grown)/1e6)
	}
}

// heapAfterGC is the live heap once the garbage (and what sync.Pools held) is collected.
func heapAfterGC() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC() // a sync.Pool's victims go at the second
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
