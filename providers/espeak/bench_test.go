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
