package transcript

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"parla/providers"
)

// fuzzTranscript builds a transcript from the fuzz input: texts holds the segments' texts
// separated by '|', and times gives each segment its start and end, 8 bytes each (little
// endian nanoseconds, so any time at all, negative and huge ones included).
func fuzzTranscript(times []byte, texts, text string, duration int64) providers.Transcript {
	t := providers.Transcript{Language: "fuzz", Duration: time.Duration(duration), Text: text}
	if texts == "" {
		return t
	}
	for i, s := range strings.Split(texts, "|") {
		var b [16]byte
		copy(b[:], times[min(16*i, len(times)):])
		t.Segments = append(t.Segments, providers.Segment{
			Start: time.Duration(binary.LittleEndian.Uint64(b[:8])),
			End:   time.Duration(binary.LittleEndian.Uint64(b[8:])),
			Text:  s,
		})
	}
	return t
}

// FuzzRender renders fuzzed transcripts in every format. Every format renders without
// error as valid UTF-8; json and verbose_json are valid JSON with times that are never
// negative nor end before they start; srt and vtt are well-formed subtitle files whose cue
// starts never go back, whose cues end after they start, hold at most MaxCueLines lines of
// at most MaxLineRunes runes (unless the line is one unbreakable word), never a "-->" or an
// unescaped tag, and keep every word of the transcript.
func FuzzRender(f *testing.F) {
	f.Add(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 0), uint64(2500*time.Millisecond)),
		"Hello, and welcome to Parla.", "", int64(3*time.Second))
	f.Add([]byte{}, "", "東京タワーは、日本の東京都港区にある電波塔です。", int64(time.Second))
	f.Fuzz(func(t *testing.T, times []byte, texts, text string, duration int64) {
		tr := fuzzTranscript(times, texts, text, duration)
		cleaned := Clean(validUTF8(tr)) // what the renderers lay out
		for _, name := range providers.TranscriptFormats {
			out, err := Render(tr, name)
			if err != nil {
				t.Fatalf("Render %s: %v", name, err)
			}
			if !utf8.Valid(out) {
				t.Fatalf("Render %s: output is not valid UTF-8: %q", name, out)
			}
			switch name {
			case "json":
				var v struct{ Text string }
				if err := json.Unmarshal(out, &v); err != nil {
					t.Fatalf("json: %v: %s", err, out)
				}
			case "text":
				if !strings.HasSuffix(string(out), "\n") {
					t.Fatalf("text does not end with a newline: %q", out)
				}
			case "verbose_json":
				checkVerbose(t, cleaned, out)
			case "srt", "vtt":
				var cs []cue
				if len(out) > 0 { // an srt file without cues is empty
					cs = parseSubtitles(t, string(out), name)
				}
				checkCues(t, cs)
				checkLines(t, cs, subtitleRules(cleaned))
				// srt shortens arrows ("-->" to "->"): compare without '-' and '>' there.
				drop := ""
				if name == "srt" {
					drop = "->"
				}
				checkWords(t, cleaned, cs, drop)
			}
		}
	})
}

// checkVerbose holds verbose_json's shape: one segment per input segment, in order, with
// valid times.
func checkVerbose(t *testing.T, tr providers.Transcript, out []byte) {
	t.Helper()
	var v verbose
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("verbose_json: %v: %s", err, out)
	}
	if len(v.Segments) != len(tr.Segments) {
		t.Fatalf("verbose_json has %d segments for %d", len(v.Segments), len(tr.Segments))
	}
	for i, s := range v.Segments {
		if s.ID != i || s.Start < 0 || s.End < s.Start {
			t.Fatalf("verbose_json segment %d: id %d, %v → %v", i, s.ID, s.Start, s.End)
		}
	}
}

// checkLines: a line over MaxLineRunes is one word that no rule may break: no space in it,
// and no place between two of its characters where a line may break.
func checkLines(t *testing.T, cs []cue, r Rules) {
	t.Helper()
	for i, c := range cs {
		for _, l := range c.lines {
			if utf8.RuneCountInString(l) <= r.LineRunes {
				continue
			}
			if len(strings.Fields(l)) > 1 {
				t.Fatalf("cue %d: line of %d runes holds several words: %q", i+1, utf8.RuneCountInString(l), l)
			}
			var prev rune
			for j, r := range l {
				if j > 0 && breakBetween(prev, r) {
					t.Fatalf("cue %d: line of %d runes could break before %q: %q", i+1, utf8.RuneCountInString(l), r, l)
				}
				prev = r
			}
		}
	}
}

// checkWords: the cues hold every non-space character of the transcript's segments (or of
// its text when it has none), nothing more, leaving out the characters in drop. (Their
// order may differ: the cues of overlapping segments interleave.)
func checkWords(t *testing.T, tr providers.Transcript, cs []cue, drop string) {
	t.Helper()
	dropped := func(r rune) rune {
		if strings.ContainsRune(drop, r) {
			return -1
		}
		return r
	}
	var want, got strings.Builder
	segs := tr.Segments
	if len(segs) == 0 {
		segs = []providers.Segment{{Text: tr.Text}}
	}
	for _, s := range segs {
		want.WriteString(strings.Join(strings.Fields(strings.ToValidUTF8(s.Text, "\uFFFD")), ""))
	}
	for _, c := range cs {
		for _, l := range c.lines {
			got.WriteString(strings.Join(strings.Fields(l), ""))
		}
	}
	sorted := func(s string) string {
		r := []rune(strings.Map(dropped, s))
		slices.Sort(r)
		return string(r)
	}
	if g, w := sorted(got.String()), sorted(want.String()); g != w {
		t.Fatalf("the cues hold %q, the transcript %q", got.String(), want.String())
	}
}
