package api

import (
	"testing"
)

// A cue's time that a time.Duration cannot hold is refused with invalid_transcript, not
// wrapped (18446744073710 ms was stored as 0).
func TestEditorCueTimesInRange(t *testing.T) {
	for _, c := range []struct {
		start, end int64
		ok         bool
	}{
		{0, 1000, true},
		{9_223_372_036_854, 9_223_372_036_854, true},
		{18446744073710, 18446744073710, false},
		{0, 18446744073710, false},
		{9_223_372_036_855, 9_223_372_036_855, false},
		{-1, 1000, false},
	} {
		segs, err := segmentsOf([]editorCue{{Start: c.start, End: c.end, Text: "One."}})
		if c.ok != (err == nil) {
			t.Errorf("%d–%d: %v", c.start, c.end, err)
			continue
		}
		if err != nil {
			if e := classify(err); e.kind.code != "invalid_transcript" || e.kind.status != 400 {
				t.Errorf("%d–%d: %s %d", c.start, c.end, e.kind.code, e.kind.status)
			}
			continue
		}
		if segs[0].Start.Milliseconds() != c.start || segs[0].End.Milliseconds() != c.end {
			t.Errorf("%d–%d read as %s–%s", c.start, c.end, segs[0].Start, segs[0].End)
		}
	}
}
