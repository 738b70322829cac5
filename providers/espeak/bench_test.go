package espeak

import (
	"context"
	"io"
	"strings"
	"testing"

	"parla/providers"
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
