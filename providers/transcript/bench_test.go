package transcript

import (
	"fmt"
	"testing"
)

// BenchmarkRender renders an hour of speech (the conformance test's transcripts) in
// English and Japanese, with and without word times: srt and vtt lay out and retime every
// cue; text, which only joins the segments, is the floor to compare them with.
//
//	go test -run XXX -bench Render -benchmem ./providers/transcript/
func BenchmarkRender(b *testing.B) {
	for _, sp := range []speech{speeches[0], speeches[4]} {
		for _, words := range []bool{false, true} {
			tr := longTranscript(sp, 60, words, 1)
			for _, format := range []string{"text", "srt", "vtt", "verbose_json"} {
				b.Run(fmt.Sprintf("%s/words=%v/%s", sp.lang, words, format), func(b *testing.B) {
					for b.Loop() {
						if _, err := Render(tr, format); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
