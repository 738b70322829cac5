package transcript

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"parla/providers"
)

// ZeroLengthCue is how long a zero-length segment is shown at most.
const ZeroLengthCue = time.Second

// cue is one subtitle: a time span and up to Rules.Lines lines of text.
type cue struct {
	start, end time.Duration
	lines      []string
	cps        float64 // the most characters a second of its segment's rules; 0: r.MaxCPS
	speaker    string  // its segment's speaker (speakerName), "" when unknown
}

// cues lays out a transcript's segments as subtitle cues by the rules of its language, in
// order of start, with valid times that keep the hard rules (see Rules).
func cues(t providers.Transcript) []cue {
	segs := t.Segments
	if len(segs) == 0 && strings.TrimSpace(t.Text) != "" {
		segs = []providers.Segment{{Start: 0, End: t.Duration, Text: t.Text}}
	}
	r := subtitleRules(t)
	var out []cue
	for _, s := range subtitleTimes(segs, t.Duration) {
		cs := layoutSegment(s, segmentRules(r, s.Text))
		for i := range cs {
			cs[i].speaker = speakerName(s.Speaker)
		}
		out = append(out, cs...)
	}
	// A long segment's later cues start after its own start, possibly after the start of
	// the next segment (which may overlap it): cues go in order of start.
	slices.SortStableFunc(out, func(a, b cue) int { return cmp.Compare(a.start, b.start) })
	retime(out, r, t.Duration.Truncate(time.Millisecond))
	return out
}

// maxTime is the latest time a segment keeps: a whole millisecond a day short of the
// largest time.Duration (about 292 years), so that no cue's end overflows.
const maxTime = endOfTime - 24*time.Hour

// endOfTime is the latest time a cue can have, whole milliseconds. Cues moved to keep
// MinGap saturate there (only a broken engine's times come near it).
const endOfTime = time.Duration(math.MaxInt64) / time.Millisecond * time.Millisecond

// clampTimes makes a segment's times valid on their own: no negative time, none past
// maxTime, no end before the start, and a start no earlier than prevStart.
func clampTimes(s providers.Segment, prevStart time.Duration) providers.Segment {
	s.Start = min(max(s.Start, prevStart, 0), maxTime)
	s.End = min(max(s.End, s.Start), maxTime)
	return s
}

// subtitleTimes returns the segments with times a subtitle file can carry: starts
// non-decreasing, ends after starts. A zero-length segment lasts ZeroLengthCue, cut short
// by the next segment's start or the end of the audio when they come later than its start.
// Segments without text are dropped.
func subtitleTimes(segs []providers.Segment, duration time.Duration) []providers.Segment {
	out := make([]providers.Segment, 0, len(segs))
	var prev time.Duration
	for _, s := range segs {
		if strings.TrimSpace(s.Text) == "" {
			continue
		}
		// Printed times have millisecond precision: decide zero length on what is printed.
		s.Start, s.End = s.Start.Truncate(time.Millisecond), s.End.Truncate(time.Millisecond)
		s = clampTimes(s, prev)
		prev = s.Start
		out = append(out, s)
	}
	for i := range out {
		if out[i].End > out[i].Start {
			continue
		}
		start := out[i].Start
		out[i].End = start + ZeroLengthCue
		if i+1 < len(out) && out[i+1].Start > start {
			out[i].End = min(out[i].End, out[i+1].Start)
		}
		if end := duration.Truncate(time.Millisecond); end > start {
			out[i].End = min(out[i].End, end)
		}
	}
	return out
}

// unit is a piece of text that is never broken across lines, and whether a space separates
// it from the unit before.
type unit struct {
	text  string
	space bool
}

// units cuts text into breakable pieces: words at spaces, and within a word, single
// characters of scripts written without spaces (a punctuation mark or a prolonged-sound mark
// stays with the character before it, an opening bracket with the one after).
func units(text string) []unit {
	var out []unit
	for _, word := range strings.Fields(text) {
		first := true
		start := 0
		var prev rune
		for i, r := range word {
			if i > 0 && breakBetween(prev, r) {
				out = append(out, unit{word[start:i], first})
				first, start = false, i
			}
			prev = r
		}
		out = append(out, unit{word[start:], first})
	}
	return out
}

// breakBetween reports whether a line may break between a and b inside a word.
func breakBetween(a, b rune) bool {
	if !unspaced(a) && !unspaced(b) {
		return false
	}
	if unicode.IsPunct(b) || unicode.Is(unicode.Lm, b) {
		return false
	}
	return !unicode.In(a, unicode.Ps, unicode.Pi)
}

// wrap lays units out in as few lines of at most limit runes as greedy filling needs, then
// narrows the lines as far as it can without needing more of them, so a two-line cue is not
// one full line and a word. A unit longer than limit gets a line of its own.
func wrap(us []unit, limit int) []string {
	lines := fill(us, limit)
	if len(lines) < 2 {
		return lines
	}
	total := 0
	for _, l := range lines {
		total += utf8.RuneCountInString(l)
	}
	for w := (total + len(lines) - 1) / len(lines); w < limit; w++ {
		if narrow := fill(us, w); len(narrow) == len(lines) {
			return narrow
		}
	}
	return lines
}

// fill lays units out greedily in lines of at most limit runes.
func fill(us []unit, limit int) []string {
	var lines []string
	var line strings.Builder
	n := 0
	for _, u := range us {
		size := utf8.RuneCountInString(u.text)
		sep := 0
		if u.space && n > 0 {
			sep = 1
		}
		if n > 0 && n+sep+size > limit {
			lines = append(lines, line.String())
			line.Reset()
			n, sep = 0, 0
		}
		if sep == 1 {
			line.WriteByte(' ')
		}
		line.WriteString(u.text)
		n += sep + size
	}
	if n > 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// subtitleRules are the rules t's subtitles are laid out by: its language's, or its
// script's when the language has no rules of its own.
func subtitleRules(t providers.Transcript) Rules {
	return rulesForText(t.Language, text(t))
}

// segmentRules are the rules of one segment: the transcript's, unless the segment is
// written in another kind of script (Japanese in an English transcript, or English in a
// Japanese one), when its script's rules fit it better.
func segmentRules(r Rules, text string) Rules {
	byScript := rulesForText("", text)
	if cjk(byScript) != cjk(r) {
		return byScript
	}
	return r
}

// cjk reports whether rules are those of a script written without spaces (a line holds
// far fewer characters).
func cjk(r Rules) bool {
	return r.LineRunes < 20
}
