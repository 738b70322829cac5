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

// fuzzLanguages are the languages a fuzzed transcript may be in, picked by its duration.
var fuzzLanguages = []string{"fuzz", "english", "ru", "japanese", "zh-Hans", "arabic", "es"}

// fuzzTranscript builds a transcript from the fuzz input: texts holds the segments' texts
// separated by '|', and times gives each segment its start and end, 8 bytes each (little
// endian nanoseconds, so any time at all, negative and huge ones included). The bytes of
// times after those give words to the segments, in order, as long as they last: 4 bytes a
// word of the segment's text (split at spaces), its start and length in milliseconds from
// the segment's start (so words may overlap, go back or leave their segment). The
// language is picked from fuzzLanguages by the duration.
func fuzzTranscript(times []byte, texts, text string, duration int64) providers.Transcript {
	t := providers.Transcript{Duration: time.Duration(duration), Text: text}
	t.Language = fuzzLanguages[uint64(duration)%uint64(len(fuzzLanguages))]
	if texts == "" {
		return t
	}
	parts := strings.Split(texts, "|")
	rest := times[min(16*len(parts), len(times)):]
	for i, s := range parts {
		var b [16]byte
		copy(b[:], times[min(16*i, len(times)):])
		seg := providers.Segment{
			Start: time.Duration(binary.LittleEndian.Uint64(b[:8])),
			End:   time.Duration(binary.LittleEndian.Uint64(b[8:])),
			Text:  s,
		}
		fields := strings.Fields(s)
		if len(fields) > 0 && len(rest) >= 4*len(fields) {
			for _, f := range fields {
				start := seg.Start + time.Duration(binary.LittleEndian.Uint16(rest))*time.Millisecond
				length := time.Duration(binary.LittleEndian.Uint16(rest[2:])) * time.Millisecond
				seg.Words = append(seg.Words, providers.Word{Start: start, End: start + length, Text: " " + f})
				rest = rest[4:]
			}
		}
		t.Segments = append(t.Segments, seg)
	}
	return t
}

// FuzzRender renders fuzzed transcripts in every format. Every format renders without
// error as valid UTF-8; json and verbose_json are valid JSON with times that are never
// negative nor end before they start; srt and vtt are well-formed subtitle files that keep
// the hard rules of the transcript's language (see checkCues), never hold a "-->" or an
// unescaped tag, and keep every word of the cleaned transcript.
func FuzzRender(f *testing.F) {
	f.Add(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 0), uint64(2500*time.Millisecond)),
		"Hello, and welcome to Parla.", "", int64(3*time.Second))
	f.Add([]byte{}, "", "東京タワーは、日本の東京都港区にある電波塔です。", int64(time.Second))
	// Word times: two segments, the second's words out of order and past its end.
	f.Add(slices.Concat(
		binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 0), uint64(4*time.Second)),
		binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(4*time.Second)), uint64(9*time.Second)),
		[]byte{0, 0, 200, 0, 200, 0, 144, 1, 0x58, 0x02, 0xe8, 0x03, 0xb8, 0x0b, 0x10, 0x27, 0, 0, 50, 0, 0x10, 0x27, 0xe8, 0x03, 0, 0, 0, 0}),
		"Hello there Dr. Smith|and 3 500 people came back late", "", int64(12*time.Second))
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
				checkCues(t, cs, subtitleRules(cleaned))
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

// checkVerbose holds verbose_json's shape: one segment per segment of the cleaned
// transcript, in order, with valid times, and its words with valid times.
func checkVerbose(t *testing.T, tr providers.Transcript, out []byte) {
	t.Helper()
	var v verbose
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("verbose_json: %v: %s", err, out)
	}
	if len(v.Segments) != len(tr.Segments) {
		t.Fatalf("verbose_json has %d segments for %d", len(v.Segments), len(tr.Segments))
	}
	words := 0
	for i, s := range v.Segments {
		if s.ID != i || s.Start < 0 || s.End < s.Start {
			t.Fatalf("verbose_json segment %d: id %d, %v → %v", i, s.ID, s.Start, s.End)
		}
		words += len(tr.Segments[i].Words)
	}
	if len(v.Words) > words {
		t.Fatalf("verbose_json has %d words for %d", len(v.Words), words)
	}
	for i, w := range v.Words {
		if w.Start < 0 || w.End < w.Start || strings.TrimSpace(w.Word) != w.Word || w.Word == "" {
			t.Fatalf("verbose_json word %d: %+v", i, w)
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
