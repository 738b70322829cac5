package espeak

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/testkit"
)

// benchText returns n characters of varied English sentences.
func benchText(n int) string {
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven wizards quietly " +
		"hex the jovial kingdom near an old river bank before dawn and nobody notices anything")
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		k := 5 + i%9
		for j := 0; j < k; j++ {
			w := words[(i*7+j*3)%len(words)]
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			if j < k-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString(". ")
	}
	return b.String()[:n]
}

// The targets on a 2-core machine: 1,000 characters well under 1.5 s, 50,000 under 30 s,
// for every format. Run with: go test ./providers/espeak -run '^$' -bench . -benchtime 1x
func BenchmarkSpeak1k(b *testing.B)  { benchSpeak(b, 1000) }
func BenchmarkSpeak50k(b *testing.B) { benchSpeak(b, 50000) }

func benchSpeak(b *testing.B, n int) {
	s := setup(b, Config{})
	text := benchText(n)
	for _, format := range providers.SpeechFormats {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				req := providers.SpeechRequest{Voice: "alloy", Text: text, Format: format, Speed: 1}
				if err := s.Speak(context.Background(), req, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSpeak50kVsBare measures Speak on 50,000 characters next to the bare pipeline
// (one espeak-ng piped into one ffmpeg encode with the same encoder settings), in the same
// run and interleaved, so a machine loaded by something else loads both alike. It reports
// the medians and their ratio; the target on 2 cores is at most 0.75 for mp3 and opus.
// Run with: go test ./providers/espeak -run '^$' -bench Vs -benchtime 5x
func BenchmarkSpeak50kVsBare(b *testing.B) {
	s := setup(b, Config{})
	text := benchText(50000)
	for _, format := range providers.SpeechFormats {
		b.Run(format, func(b *testing.B) {
			var bare, speak, bareCPU, speakCPU []time.Duration
			for b.Loop() {
				start, cpu := time.Now(), childCPU()
				barePipeline(b, text, format)
				bare = append(bare, time.Since(start))
				bareCPU = append(bareCPU, childCPU()-cpu)
				start, cpu = time.Now(), childCPU()
				req := providers.SpeechRequest{Voice: "alloy", Text: text, Format: format, Speed: 1}
				if err := s.Speak(context.Background(), req, io.Discard); err != nil {
					b.Fatal(err)
				}
				speak = append(speak, time.Since(start))
				speakCPU = append(speakCPU, childCPU()-cpu)
			}
			mb, ms := median(bare), median(speak)
			b.ReportMetric(float64(mb.Milliseconds()), "bare-ms")
			b.ReportMetric(float64(ms.Milliseconds()), "speak-ms")
			b.ReportMetric(float64(ms)/float64(mb), "speak/bare")
			// Each Speak against the bare run just before it: the pairs share the load of
			// the moment, so their ratio is steadier than the ratio of the medians.
			ratios := make([]time.Duration, len(bare))
			for i := range bare {
				ratios[i] = speak[i] * 1000 / bare[i]
			}
			b.ReportMetric(float64(median(ratios))/1000, "paired-speak/bare")
			// CPU time of the processes (espeak-ng, ffmpeg): what the parallel version
			// spends more in process starts and the join.
			b.ReportMetric(float64(median(bareCPU).Milliseconds()), "bare-cpu-ms")
			b.ReportMetric(float64(median(speakCPU).Milliseconds()), "speak-cpu-ms")
			// Cores the processes kept busy on average: the parallel version can only
			// beat the bare pipeline by as much as the machine lets it use a second core
			// (other work on a shared machine takes it away).
			b.ReportMetric(sumRatio(bareCPU, bare), "bare-cores")
			b.ReportMetric(sumRatio(speakCPU, speak), "speak-cores")
		})
	}
}

// BenchmarkSpeak50kChunkSize is how the default chunk size was chosen: more chunks cost
// more ffmpeg starts, fewer leave a core idle at the end and move progress in bigger steps.
// Run with: go test ./providers/espeak -run '^$' -bench ChunkSize -benchtime 3x
func BenchmarkSpeak50kChunkSize(b *testing.B) {
	text := benchText(50000)
	for _, size := range chunkSizes() {
		s := setup(b, Config{ChunkChars: size})
		for _, format := range []string{"mp3", "opus"} {
			b.Run(fmt.Sprintf("%s/%d", format, size), func(b *testing.B) {
				for b.Loop() {
					req := providers.SpeechRequest{Voice: "alloy", Text: text, Format: format, Speed: 1}
					if err := s.Speak(context.Background(), req, io.Discard); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// barePipeline runs espeak-ng on the whole text piped into one ffmpeg encode to a file,
// and returns the file's path.
func barePipeline(tb testing.TB, text, format string) string {
	tb.Helper()
	f, _ := media.Format(format)
	out := filepath.Join(tb.TempDir(), "bare."+f.Ext)
	args, err := media.EncodeArgs(media.WAV, media.EncodeOptions{Format: format}, "file:"+out)
	if err != nil {
		tb.Fatal(err)
	}
	espeak := exec.Command("espeak-ng", Args("en-us", normalWPM)...)
	testkit.Pipe(tb, text, espeak, exec.Command("ffmpeg", args...))
	return out
}

// childCPU is the user and system time of this process's finished child processes.
func childCPU() time.Duration {
	_, children := testkit.CPU()
	return children
}

// sumRatio is sum(a) / sum(b).
func sumRatio(a, b []time.Duration) float64 {
	var x, y time.Duration
	for i := range a {
		x, y = x+a[i], y+b[i]
	}
	return float64(x) / float64(y)
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// 50,000 characters in Spanish and in Japanese (with kanji, converted by kakasi), mp3: the
// target is a link within 30 s of payment, of which this is nearly all. Run with:
// go test ./providers/espeak -run '^$' -bench 'Speak50k(Spanish|Japanese)' -benchtime 1x
func BenchmarkSpeak50kSpanish(b *testing.B) {
	benchSpeakLanguage(b, "es", "Esta mañana hacía frío, así que nos quedamos en casa leyendo libros. "+
		"Por la tarde salió el sol y dimos un largo paseo junto al río. ¿Quién sabe qué tiempo hará mañana? "+
		"Los niños jugaban en el parque mientras sus padres charlaban tranquilamente.\n")
}

func BenchmarkSpeak50kJapanese(b *testing.B) {
	benchSpeakLanguage(b, "ja", "今朝は寒かったので、家で本を読んでいました。午後になると日が出てきたので、"+
		"川に沿って長い散歩をしました。明日の天気はどうなるでしょうか。子供たちは公園で遊び、親たちは静かに話していました。\n")
}

func benchSpeakLanguage(b *testing.B, lang, paragraph string) {
	s := setup(b, Config{})
	var t strings.Builder
	for t.Len() == 0 || len([]rune(t.String())) < 50000 {
		t.WriteString(paragraph)
	}
	text := string([]rune(t.String())[:50000])
	for b.Loop() {
		req := providers.SpeechRequest{Voice: "nova", Text: text, Format: "mp3", Speed: 1, Language: lang}
		if err := s.Speak(context.Background(), req, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// chunkSizes are the chunk sizes BenchmarkSpeak50kChunkSize tries: PARLA_CHUNK_SIZES
// (comma-separated) or a spread from many small chunks to the fewest.
func chunkSizes() []int {
	sizes := []int{1500, 3000, 5000, 8000, 13000}
	if env := os.Getenv("PARLA_CHUNK_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				sizes = append(sizes, n)
			}
		}
	}
	return sizes
}
