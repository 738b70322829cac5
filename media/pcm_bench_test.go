package media

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// BenchmarkDecodePCM decodes a 10-minute 44.1 kHz stereo mp3 (tone plus noise, like a
// typical upload) to 16 kHz mono float32. Besides ns/op it reports the megabytes allocated
// per decode and their ratio to the samples' own size (10 min × 16000 × 4 B = 38.4 MB): a
// ratio near 1 means no second copy of the audio was made on the way.
func BenchmarkDecodePCM(b *testing.B) {
	r := New(Config{})
	if err := r.Check(); err != nil {
		b.Skip(err)
	}
	const length = 10 * time.Minute
	path := b.TempDir() + "/ten-minutes.mp3"
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=600",
		"-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.1:sample_rate=44100:duration=600",
		"-filter_complex", "[0][1]amix=inputs=2,aformat=channel_layouts=stereo",
		"-c:a", "libmp3lame", "-b:a", "128k", "file:" + path}
	if err := r.FFmpeg(context.Background(), args, nil, nil); err != nil {
		b.Fatal(err)
	}
	info, err := r.Probe(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	samplesMB := float64(length/time.Second) * PCMRate * 4 / 1e6

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	for b.Loop() {
		samples, err := r.DecodePCM(context.Background(), path, info.Duration, 0)
		if err != nil {
			b.Fatal(err)
		}
		if got := time.Duration(len(samples)) * time.Second / PCMRate; got < length-time.Second || got > length+time.Second {
			b.Fatalf("decoded %v of audio, want %v", got, length)
		}
		n++
	}
	runtime.ReadMemStats(&after)
	allocMB := float64(after.TotalAlloc-before.TotalAlloc) / float64(n) / 1e6
	b.ReportMetric(allocMB, "MB-alloc/op")
	b.ReportMetric(allocMB/samplesMB, "alloc/samples")
}
