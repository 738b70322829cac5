package transcript

// Speakers, where the engine tells them apart (Segment.Speaker): a subtitle file names
// them the way its format can. WebVTT marks every cue with a voice span (<v A>), which
// players may style or announce without showing it as text; SRT and plain text have no
// markup, so the name is written before the words where the speaker changes ("A: …"),
// counted in the line like any text. json keeps the bare text; verbose_json gives each
// segment its "speaker", as OpenAI's diarized_json does.

import (
	"strings"
	"unicode"

	"parla/providers"
)

// speakerName is a speaker as a file may carry it: on one line, spaces collapsed.
func speakerName(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)), " ")
}

// hasSpeakers reports whether any segment names its speaker.
func hasSpeakers(segs []providers.Segment) bool {
	for _, s := range segs {
		if speakerName(s.Speaker) != "" {
			return true
		}
	}
	return false
}

// turns tells, for each segment, whether a turn starts there: it is the first segment
// with text, or its speaker differs from that of the last segment with text before it.
func turns(segs []providers.Segment) []bool {
	out := make([]bool, len(segs))
	prev, first := "", true
	for i, s := range segs {
		if strings.TrimSpace(s.Text) == "" {
			continue
		}
		name := speakerName(s.Speaker)
		out[i] = first || name != prev
		prev, first = name, false
	}
	return out
}

// labelled returns t with each turn's first segment led by its speaker's name ("A: …"),
// for the formats without markup. Its segments are copied, never changed.
func labelled(t providers.Transcript) providers.Transcript {
	if !hasSpeakers(t.Segments) {
		return t
	}
	starts := turns(t.Segments)
	segs := make([]providers.Segment, len(t.Segments))
	for i, s := range t.Segments {
		if name := speakerName(s.Speaker); starts[i] && name != "" {
			s.Text = name + ": " + strings.TrimSpace(s.Text)
			s.Words = nil // they no longer spell the text; its time is shared by characters
		}
		segs[i] = s
	}
	t.Segments = segs
	return t
}

// speakerText is the plain text of a transcript with speakers: one paragraph a turn, led
// by the speaker's name when it has one.
func speakerText(t providers.Transcript) string {
	starts := turns(t.Segments)
	var paras []string
	var turn []providers.Segment
	flush := func() {
		if len(turn) > 0 {
			paras = append(paras, Join(labelled(providers.Transcript{Segments: turn}).Segments))
		}
		turn = nil
	}
	for i, s := range t.Segments {
		if strings.TrimSpace(s.Text) == "" {
			continue
		}
		if starts[i] {
			flush()
		}
		turn = append(turn, s)
	}
	flush()
	return strings.Join(paras, "\n")
}
