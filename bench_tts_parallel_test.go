package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/testkit"
)

// BenchmarkTTSLinkReady50000CharsVsBare measures payment → link for 50,000 characters of
// English with espeak-ng in every format, next to the bare pipeline (one espeak-ng piped
// into one ffmpeg encode with the same settings, to a file), interleaved in the same run so
// that load from elsewhere weighs on both alike. Target on 2 cores: the link within 0.75×
// the bare pipeline for mp3 and opus, whose one encoder bounds the bare pipeline.
//
//	go test -run '^$' -bench TTSLinkReady50000CharsVsBare -benchtime 3x .
func BenchmarkTTSLinkReady50000CharsVsBare(b *testing.B) {
	requireMediaTools(b)
	h := startApp(b, map[string]string{"TTS_MAX_CHARS": "100000"})
	text := benchText(50000)
	for _, format := range providers.SpeechFormats {
		b.Run(format, func(b *testing.B) {
			var link, bare []time.Duration
			for b.Loop() {
				start := time.Now()
				bareTTS(b, text, format)
				bare = append(bare, time.Since(start))

				b.StopTimer()
				sessionID, url := h.checkout(ttsOrder(text, "alloy", format, 1, "bench@example.com", "en"))
				b.StartTimer()
				start = time.Now()
				h.wantStatus(h.do("POST", url+"/pay", "", nil, nil), 303)
				h.waitForLink(sessionID, 2*time.Minute)
				link = append(link, time.Since(start))
			}
			ml, mb := medianOf(link), medianOf(bare)
			b.ReportMetric(float64(ml.Milliseconds()), "median-ms-to-link")
			b.ReportMetric(float64(mb.Milliseconds()), "median-ms-bare")
			b.ReportMetric(float64(ml)/float64(mb), "link/bare")
		})
	}
}

// bareTTS runs espeak-ng on the whole text piped into one ffmpeg encode to a file.
func bareTTS(b *testing.B, text, format string) {
	b.Helper()
	f, _ := media.Format(format)
	out := filepath.Join(b.TempDir(), "bare."+f.Ext)
	args, err := media.EncodeArgs(media.WAV, media.EncodeOptions{Format: format}, "file:"+out)
	if err != nil {
		b.Fatal(err)
	}
	espeak := exec.Command("espeak-ng", "--stdout", "-b", "1", "-v", "en-us", "-s", "175")
	testkit.Pipe(b, text, espeak, exec.Command("ffmpeg", args...))
}

func medianOf(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
