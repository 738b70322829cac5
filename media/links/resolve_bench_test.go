package links

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/providers/testkit"
)

// The targets for analysing a direct link.
const (
	benchFileSize   = 600 << 20 // what the source offers
	benchMaxRead    = 2 << 20   // what one analysis may read of it
	benchMaxAnalyze = time.Second
	benchClipLength = 30 * time.Minute
)

// paddedClips are real MP4s of benchClipLength (1 fps video and 16 kHz mono AAC, so the
// index is the size a real half-hour video's is) whose mdat box is enlarged with zeros to
// the size asked for. The zeros are a hole in a sparse file: no disk is spent, yet the
// server offers every byte, the structure is valid and ffprobe must find the true duration.
type paddedClips struct {
	dir string
}

// makePaddedClips writes <kind>-<size>.mp4 for kind "fast" (moov first) and "slow" (moov
// after mdat) and each size in bytes.
func makePaddedClips(b *testing.B, sizes ...int64) paddedClips {
	b.Helper()
	ffmpegBin := testkit.Binary(b, "ffmpeg")
	testkit.Binary(b, "ffprobe")
	dir := b.TempDir()
	slow, fast := filepath.Join(dir, "slow.mp4"), filepath.Join(dir, "fast.mp4")
	run := func(args ...string) {
		b.Helper()
		if out, err := exec.Command(ffmpegBin, args...).CombinedOutput(); err != nil {
			b.Fatalf("ffmpeg %q: %v: %s", args, err, out)
		}
	}
	run("-nostdin", "-v", "error", "-y",
		"-f", "lavfi", "-i", "color=c=black:s=64x64:r=1",
		"-f", "lavfi", "-i", "sine=frequency=300:sample_rate=16000",
		"-t", strconv.Itoa(int(benchClipLength.Seconds())),
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "600", "-c:a", "aac", "-b:a", "16k", "-ac", "1", slow)
	run("-nostdin", "-v", "error", "-y", "-i", slow, "-c", "copy", "-movflags", "+faststart", fast)
	for _, kind := range []string{"fast", "slow"} {
		for _, size := range sizes {
			src := filepath.Join(dir, kind+".mp4")
			if err := padMdat(src, filepath.Join(dir, paddedName(kind, size)), size); err != nil {
				b.Fatal(err)
			}
		}
	}
	return paddedClips{dir: dir}
}

func paddedName(kind string, size int64) string {
	return fmt.Sprintf("%s-%dMB.mp4", kind, size>>20)
}

// padMdat copies the MP4 at src to dst with its mdat box grown so that dst is size bytes.
// The padding follows mdat's payload, so no sample offset moves.
func padMdat(src, dst string, size int64) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	pad := size - int64(len(data))
	at, end, err := findBox(data, "mdat")
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	grown := uint64(end-at) + uint64(pad)
	if pad < 0 || grown > 0xffffffff || binary.BigEndian.Uint32(data[at:]) == 1 {
		return fmt.Errorf("%s: cannot pad to %d bytes", src, size)
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	head := append([]byte(nil), data[:end]...)
	binary.BigEndian.PutUint32(head[at:], uint32(grown))
	if _, err := out.Write(head); err != nil {
		return err
	}
	// Skip the padding: a hole that reads as zeros.
	if _, err := out.Seek(pad, io.SeekCurrent); err != nil {
		return err
	}
	if _, err := out.Write(data[end:]); err != nil {
		return err
	}
	return out.Truncate(size)
}

// findBox returns the start and end offsets of the first top-level box of type typ.
func findBox(data []byte, typ string) (int, int, error) {
	for at := 0; at+8 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[at:]))
		if n == 1 && at+16 <= len(data) {
			n = int(binary.BigEndian.Uint64(data[at+8:]))
		}
		if n < 8 || at+n > len(data) {
			return 0, 0, fmt.Errorf("bad box at %d", at)
		}
		if string(data[at+4:at+8]) == typ {
			return at, at + n, nil
		}
		at += n
	}
	return 0, 0, fmt.Errorf("no %s box", typ)
}

// BenchmarkAnalyzeLargeDirectLink analyses a 600 MB video behind a loopback server with
// Range support: one analysis must read under 2 MB of it and answer within a second,
// whether the index (moov) comes first or last.
func BenchmarkAnalyzeLargeDirectLink(b *testing.B) {
	clips := makePaddedClips(b, benchFileSize)
	srv := serveClips(b, clips.dir)
	r := newLinkResolver(b, ResolverConfig{})
	for _, kind := range []string{"fast", "slow"} {
		b.Run("moov="+map[string]string{"fast": "start", "slow": "end"}[kind], func(b *testing.B) {
			name := paddedName(kind, benchFileSize)
			if st, err := os.Stat(filepath.Join(clips.dir, name)); err != nil || st.Size() != benchFileSize {
				b.Fatalf("the served file is not %d bytes: %v", benchFileSize, err)
			}
			link := srv.URL + "/files/" + name
			var worstRead int64
			var worstTime time.Duration
			for b.Loop() {
				before := srv.served.Load()
				start := time.Now()
				info, err := r.Analyze(context.Background(), link)
				took := time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				if !within200ms(info.Duration, benchClipLength) {
					b.Fatalf("duration %s, want %s", info.Duration, benchClipLength)
				}
				worstRead = max(worstRead, srv.served.Load()-before)
				worstTime = max(worstTime, took)
			}
			b.ReportMetric(float64(worstRead)/1024, "KB-read-worst")
			b.ReportMetric(worstTime.Seconds(), "s-worst")
			if worstRead >= benchMaxRead {
				b.Errorf("an analysis read %d bytes of the %d MB file, want < %d", worstRead, benchFileSize>>20, benchMaxRead)
			}
			if worstTime >= benchMaxAnalyze {
				b.Errorf("an analysis took %s, want < %s", worstTime, benchMaxAnalyze)
			}
		})
	}
}

// BenchmarkAnalyzeConcurrent runs 50 analyses at once on a 60 MB and a 600 MB file. The
// app's memory (peak heap and RSS growth, allocation per analysis) must not depend on the
// file's size: the relay streams through a fixed buffer and analysis reads only the index.
func BenchmarkAnalyzeConcurrent(b *testing.B) {
	const parallel = 50
	sizes := []int64{60 << 20, benchFileSize}
	clips := makePaddedClips(b, sizes...)
	srv := serveClips(b, clips.dir)
	r := newLinkResolver(b, ResolverConfig{AnalyzeTimeout: time.Minute})
	for _, size := range sizes {
		b.Run(fmt.Sprintf("size=%dMB", size>>20), func(b *testing.B) {
			link := srv.URL + "/files/" + paddedName("slow", size)
			var peak memPeak
			var read int64
			for b.Loop() {
				runtime.GC()
				peak.start()
				before := srv.served.Load()
				var wg sync.WaitGroup
				var failed atomic.Int64
				for range parallel {
					wg.Go(func() {
						info, err := r.Analyze(context.Background(), link)
						if err != nil || !within200ms(info.Duration, benchClipLength) {
							failed.Add(1)
							b.Errorf("analysis: %v, duration %s", err, info.Duration)
						}
					})
				}
				wg.Wait()
				peak.stop()
				read = max(read, (srv.served.Load()-before)/parallel)
				if read >= benchMaxRead {
					b.Errorf("an analysis read %d bytes on average, want < %d", read, benchMaxRead)
				}
			}
			b.ReportMetric(float64(read)/1024, "KB-read/analysis")
			b.ReportMetric(float64(peak.heap)/(1<<20), "MB-heap-peak-growth")
			b.ReportMetric(float64(peak.rss)/(1<<20), "MB-rss-peak-growth")
			b.ReportMetric(float64(peak.alloc)/parallel/1024, "KB-alloc/analysis")
		})
	}
}

// memPeak samples the heap and RSS while a round of analyses runs and keeps the largest
// growth over the values at start.
type memPeak struct {
	heap, rss, alloc int64

	baseHeap, baseRSS, baseAlloc int64
	done                         chan struct{}
	wg                           sync.WaitGroup
}

func (m *memPeak) start() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.baseHeap, m.baseAlloc, m.baseRSS = int64(ms.HeapInuse), int64(ms.TotalAlloc), rssBytes()
	m.done = make(chan struct{})
	m.wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			m.sample()
			select {
			case <-m.done:
				return
			case <-tick.C:
			}
		}
	})
}

func (m *memPeak) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.heap = max(m.heap, int64(ms.HeapInuse)-m.baseHeap)
	m.rss = max(m.rss, rssBytes()-m.baseRSS)
	m.alloc = max(m.alloc, int64(ms.TotalAlloc)-m.baseAlloc)
}

func (m *memPeak) stop() {
	close(m.done)
	m.wg.Wait()
	m.sample()
}

// rssBytes is this process's resident set size from /proc, 0 where there is none.
func rssBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
