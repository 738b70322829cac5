package transcript

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"parla/providers"
)

func TestLayoutSegment(t *testing.T) {
	long := "This sentence is deliberately much longer than a single subtitle line can hold, so it is shared out over several readable cues."
	tests := []struct {
		name  string
		lang  string
		text  string
		lines [][]string // lines of each cue
	}{
		{"short", "en", " Hello there. ", [][]string{{"Hello there."}}},
		{"exactly one line", "en", strings.Repeat("a", 42), [][]string{{strings.Repeat("a", 42)}}},
		{"two lines, the article kept with its noun", "en", "The quick brown fox jumps over the lazy dog and keeps running far away.",
			[][]string{{"The quick brown fox jumps over", "the lazy dog and keeps running far away."}}},
		{"long sentence broken after a clause", "en", long, [][]string{
			{"This sentence is deliberately much longer", "than a single subtitle line can hold,"},
			{"so it is shared out over", "several readable cues."},
		}},
		{"a line breaks before a conjunction, not inside a name or a number", "en",
			"Yesterday Dr. Smith met Anna Lee and paid 3 500 euros for the old car",
			[][]string{{"Yesterday Dr. Smith met Anna Lee", "and paid 3 500 euros for the old car"}}},
		{"a number keeps its unit; a cue breaks before a conjunction", "en",
			"The new pipeline will be 12 km long and the works should end in 2027 at the latest",
			[][]string{{"The new pipeline will be 12 km long", "and the works should end in 2027"}, {"at the latest"}}},
		{"runes, not bytes", "en", strings.Repeat("é", 40) + " ü", [][]string{{strings.Repeat("é", 40) + " ü"}}},
		{"a word longer than a line stays whole", "en", "See " + strings.Repeat("x", 50) + " now.",
			[][]string{{"See"}, {strings.Repeat("x", 50), "now."}}},
		{"Japanese: 13 a line, never before punctuation, not inside a number", "ja",
			"東京タワーは、日本の東京都港区にある電波塔です。高さは三百三十三メートルで、完成当時は世界一高い自立式鉄塔でした。",
			[][]string{{"東京タワーは、日本の東京", "都港区にある電波塔です。"}, {"高さは", "三百三十三メートルで、"}, {"完成当時は世界一高", "い自立式鉄塔でした。"}}},
		{"Chinese: 16 a line", "zh", strings.Repeat("中文字幕", 13), [][]string{
			{strings.Repeat("中文字幕", 4), strings.Repeat("中文字幕", 4)},
			{"中文字幕中文字幕中文", "字幕中文字幕中文字幕"},
		}},
		{"Russian: 39 a line, before a preposition", "ru", "Мы приехали в Москву поздно вечером и сразу пошли в гостиницу у вокзала.",
			[][]string{{"Мы приехали в Москву поздно вечером", "и сразу пошли в гостиницу у вокзала."}}},
		{"Arabic words, before a preposition", "ar", "مرحبا بكم في بارلا، خدمة تحويل الكلام إلى نص مع توقيت دقيق لكل جملة.",
			[][]string{{"مرحبا بكم في بارلا، خدمة تحويل الكلام", "إلى نص مع توقيت دقيق لكل جملة."}}},
		{"emoji sequences stay whole", "en", strings.Repeat("👩‍💻 ", 20),
			[][]string{{strings.TrimSpace(strings.Repeat("👩‍💻 ", 10)), strings.TrimSpace(strings.Repeat("👩‍💻 ", 10))}}},
		{"newlines and tabs are spaces", "en", "one\ntwo\t three", [][]string{{"one two three"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seg := providers.Segment{Start: sec(10), End: sec(20), Text: tt.text}
			cs := layoutSegment(seg, RulesFor(tt.lang))
			var got [][]string
			for _, c := range cs {
				got = append(got, c.lines)
			}
			if !equalLines(got, tt.lines) {
				t.Fatalf("cues\n%q\nwant\n%q", got, tt.lines)
			}
			checkShares(t, seg, cs)
		})
	}
}

// checkShares asserts that the cues of one segment without word times follow each other
// without gaps or overlaps from its start to its end, each lasting about in proportion to
// its characters (spaces left out).
func checkShares(t *testing.T, seg providers.Segment, cs []cue) {
	t.Helper()
	chars := func(lines []string) int {
		return utf8.RuneCountInString(strings.Join(strings.Fields(strings.Join(lines, " ")), ""))
	}
	total := 0
	for _, c := range cs {
		total += chars(c.lines)
	}
	at := seg.Start
	for i, c := range cs {
		if c.start != at {
			t.Errorf("cue %d starts at %v, want %v", i, c.start, at)
		}
		want := time.Duration(float64(seg.End-seg.Start) * float64(chars(c.lines)) / float64(total))
		if d := c.end - c.start - want; d < -2*time.Millisecond || d > 2*time.Millisecond {
			t.Errorf("cue %d lasts %v, want about %v", i, c.end-c.start, want)
		}
		at = c.end
	}
	if at != seg.End {
		t.Errorf("last cue ends at %v, want %v", at, seg.End)
	}
}

func runes(lines []string) int {
	n := 0
	for _, l := range lines {
		n += utf8.RuneCountInString(l)
	}
	return n
}

func equalLines(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\n") != strings.Join(b[i], "\n") {
			return false
		}
	}
	return true
}

// seg is a segment from start to end with text.
func seg(start, end time.Duration, text string) providers.Segment {
	return providers.Segment{Start: start, End: end, Text: text}
}

func TestSubtitleTimes(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		in       []providers.Segment
		duration time.Duration
		want     [][2]time.Duration
	}{
		{"kept as they are", []providers.Segment{seg(0, sec(1), "a"), seg(sec(1), sec(2), "b")}, 0,
			[][2]time.Duration{{0, sec(1)}, {sec(1), sec(2)}}},
		{"overlap stays", []providers.Segment{seg(0, sec(2), "a"), seg(sec(1), sec(3), "b")}, 0,
			[][2]time.Duration{{0, sec(2)}, {sec(1), sec(3)}}},
		{"zero length lasts until the next start", []providers.Segment{seg(sec(1), sec(1), "a"), seg(sec(1.4), sec(3), "b")}, 0,
			[][2]time.Duration{{sec(1), sec(1.4)}, {sec(1.4), sec(3)}}},
		{"zero length lasts at most a second", []providers.Segment{seg(sec(1), sec(1), "a"), seg(sec(5), sec(6), "b")}, 0,
			[][2]time.Duration{{sec(1), sec(2)}, {sec(5), sec(6)}}},
		{"zero length with a next one at the same time", []providers.Segment{seg(sec(1), sec(1), "a"), seg(sec(1), sec(2), "b")}, 0,
			[][2]time.Duration{{sec(1), sec(2)}, {sec(1), sec(2)}}},
		{"last zero length", []providers.Segment{seg(sec(9), sec(9), "end")}, 0,
			[][2]time.Duration{{sec(9), sec(10)}}},
		{"end before start", []providers.Segment{seg(sec(3), sec(2), "a")}, 0,
			[][2]time.Duration{{sec(3), sec(4)}}},
		{"start before previous start", []providers.Segment{seg(sec(5), sec(6), "a"), seg(sec(4), sec(7), "b")}, 0,
			[][2]time.Duration{{sec(5), sec(6)}, {sec(5), sec(7)}}},
		{"negative start", []providers.Segment{seg(-sec(1), sec(1), "a")}, 0,
			[][2]time.Duration{{0, sec(1)}}},
		{"sub-millisecond span is zero length", []providers.Segment{seg(sec(1), sec(1)+500*time.Microsecond, "a")}, 0,
			[][2]time.Duration{{sec(1), sec(2)}}},
		{"empty text dropped", []providers.Segment{seg(0, sec(1), "  "), seg(sec(1), sec(2), "b")}, 0,
			[][2]time.Duration{{sec(1), sec(2)}}},
		{"zero length cut at the end of the audio", []providers.Segment{seg(sec(9), sec(9), "end")}, sec(9.3),
			[][2]time.Duration{{sec(9), sec(9.3)}}},
		{"zero length at the end of the audio", []providers.Segment{seg(sec(9), sec(9), "end")}, sec(9),
			[][2]time.Duration{{sec(9), sec(10)}}},
		{"milliseconds kept", []providers.Segment{seg(1234*ms, 5678*ms, "a")}, 0,
			[][2]time.Duration{{1234 * ms, 5678 * ms}}},
		// A broken engine's times at the end of time.Duration: a cue's end must not overflow.
		{"times past the last representable second capped", []providers.Segment{
			seg(math.MaxInt64, math.MaxInt64, "a"), seg(math.MaxInt64-1000, math.MaxInt64, "b")}, 0,
			[][2]time.Duration{{maxTime, maxTime + sec(1)}, {maxTime, maxTime + sec(1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := subtitleTimes(tt.in, tt.duration)
			if len(got) != len(tt.want) {
				t.Fatalf("%d segments, want %d", len(got), len(tt.want))
			}
			for i, s := range got {
				if s.Start != tt.want[i][0] || s.End != tt.want[i][1] {
					t.Errorf("segment %d: %v–%v, want %v–%v", i, s.Start, s.End, tt.want[i][0], tt.want[i][1])
				}
			}
		})
	}
}

// A long segment is shown as several cues; when the next segment overlaps it, the cues
// still come in order of start, as WebVTT requires.
func TestCuesOrderedWhenASplitSegmentIsOverlapped(t *testing.T) {
	long := "This sentence is deliberately much longer than a single subtitle line can hold, so it is shared out over several readable cues."
	got := cues(providers.Transcript{Segments: []providers.Segment{
		seg(0, sec(10), long), seg(sec(3), sec(4), "Overlapping."),
	}})
	var starts []time.Duration
	var first []string
	for _, c := range got {
		starts = append(starts, c.start)
		first = append(first, c.lines[0])
	}
	want := []time.Duration{0, sec(3), 6320 * time.Millisecond}
	if !slices.Equal(starts, want) {
		t.Fatalf("cue starts %v, want %v (first lines %q)", starts, want, first)
	}
	if first[1] != "Overlapping." {
		t.Errorf("second cue %q, want the overlapping segment", first[1])
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		segs []string
		want string
	}{
		{nil, ""},
		{[]string{" Hello.", " World. "}, "Hello. World."},
		{[]string{"こんにちは。", "世界。"}, "こんにちは。世界。"},
		{[]string{"Hi.", "", "  ", "there."}, "Hi. there."},
		{[]string{"مرحبا", "بكم"}, "مرحبا بكم"},
	}
	for _, tt := range tests {
		var segs []providers.Segment
		for _, s := range tt.segs {
			segs = append(segs, providers.Segment{Text: s})
		}
		if got := Join(segs); got != tt.want {
			t.Errorf("Join(%q) = %q, want %q", tt.segs, got, tt.want)
		}
	}
}
