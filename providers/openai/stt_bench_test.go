package openai

import (
	"strconv"
	"testing"
	"time"

	"parla/providers"
)

// BenchmarkTranscribeLong measures what the engine itself costs on long uploads with the
// production limits (25 MB, 20 minutes a request): probing, re-encoding the WAV (too big
// to send) into speech MP3, cutting it into chunks and merging, against the fake API
// (which probes what it receives and answers at once).
//
//	go test ./providers/openai -run '^$' -bench TranscribeLong -benchtime 1x
func BenchmarkTranscribeLong(b *testing.B) {
	for _, minutes := range []int{20, 60} {
		b.Run(strconv.Itoa(minutes)+"min", func(b *testing.B) {
			benchTranscribe(b, time.Duration(minutes)*time.Minute)
		})
	}
}

func benchTranscribe(b *testing.B, d time.Duration) {
	wav := makeFile(b, "ffmpeg", "long.wav", func(out string) []string {
		return []string{"-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
			"-i", "sine=frequency=300:sample_rate=22050:duration=" + strconv.Itoa(int(d.Seconds())), out}
	})
	s := newSTT(b, TranscriberConfig{})
	b.ResetTimer()
	for range b.N {
		tr, err := s.tr.Transcribe(b.Context(), providers.TranscribeRequest{Path: wav})
		if err != nil {
			b.Fatal(err)
		}
		if !within(tr.Duration, d, time.Second) {
			b.Fatalf("duration %v, want %v", tr.Duration, d)
		}
	}
	b.ReportMetric(float64(len(s.api.received()))/float64(b.N), "requests/op")
}
