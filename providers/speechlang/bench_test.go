package speechlang

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// benchText is n characters of the corpus's long texts, a paragraph per language in turn,
// each paragraph the text four times (about 600 characters, a usual paragraph).
func benchText(t testing.TB, n int) string {
	c := loadCorpus(t)
	var b strings.Builder
	for i := 0; utf8.RuneCountInString(b.String()) < n; i++ {
		l := c[i%len(c)].Long
		b.WriteString(strings.Repeat(l+" ", 4) + "\n\n")
	}
	runes := []rune(b.String())
	return string(runes[:n])
}

// The target: 100,000 characters in under 50 ms. Run with:
// go test ./providers/speechlang -run '^$' -bench Detect -benchmem
func BenchmarkDetect100k(b *testing.B) {
	text := benchText(b, 100_000)
	d := New(espeakLangs)
	b.SetBytes(int64(len(text)))
	start := cpuTime()
	for b.Loop() {
		if _, err := d.Detect(text, "en"); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time does not grow when other processes share the cores, wall time does: the
	// two together tell a loaded machine from a slow detector.
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// One paragraph of 100,000 characters: only its first sampleRunes letters are read.
func BenchmarkDetect100kOneParagraph(b *testing.B) {
	text := strings.ReplaceAll(benchText(b, 100_000), "\n", " ")
	d := New(espeakLangs)
	for b.Loop() {
		if _, err := d.Detect(text, "en"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDetectorMemory reports what a detector costs in memory: what New allocates (its
// whitelist and language set), and the heap in use by the whole test process with
// whatlanggo's profiles loaded (package tables, built at start): an upper bound for them.
func TestDetectorMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := New(espeakLangs)
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("detector: New allocates %.1f KB; process heap in use %.1f MB", float64(after.TotalAlloc-before.TotalAlloc)/1024, float64(after.HeapInuse)/(1<<20))
	runtime.KeepAlive(d)
}
