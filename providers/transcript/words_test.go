package transcript

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"parla/providers"
)

// timedWords gives each word of text (split at spaces, leading space kept) the times in
// at: start and end in seconds, two numbers a word.
func timedWords(text string, at ...float64) []providers.Word {
	fields := strings.Fields(text)
	if len(at) != 2*len(fields) {
		panic("timedWords: " + text)
	}
	words := make([]providers.Word, len(fields))
	for i, f := range fields {
		words[i] = providers.Word{Start: sec(at[2*i]), End: sec(at[2*i+1]), Text: " " + f}
	}
	return words
}

// wordSample has word times that time shared out by characters would get wrong: a long
// pause in the middle of a segment, a slow start, words without punctuation (as OpenAI
// gives them) and whisper-like tokens that cut words.
var wordSample = providers.Transcript{
	Language: "english",
	Duration: sec(40),
	Segments: []providers.Segment{
		{Start: 0, End: sec(12), Text: " Well, we waited for the results all night. In the morning the phone rang at last.",
			Words: []providers.Word{
				{Start: sec(0.2), End: sec(0.6), Text: " Well"}, {Start: sec(1.5), End: sec(1.8), Text: " we"},
				{Start: sec(1.8), End: sec(2.2), Text: " waited"}, {Start: sec(2.2), End: sec(2.4), Text: " for"},
				{Start: sec(2.4), End: sec(2.5), Text: " the"}, {Start: sec(2.5), End: sec(3.0), Text: " results"},
				{Start: sec(3.0), End: sec(3.3), Text: " all"}, {Start: sec(3.3), End: sec(3.9), Text: " night"},
				{Start: sec(8.0), End: sec(8.1), Text: " In"}, {Start: sec(8.1), End: sec(8.2), Text: " the"},
				{Start: sec(8.2), End: sec(8.7), Text: " morning"}, {Start: sec(8.7), End: sec(8.8), Text: " the"},
				{Start: sec(8.8), End: sec(9.2), Text: " phone"}, {Start: sec(9.2), End: sec(9.6), Text: " rang"},
				{Start: sec(9.6), End: sec(9.8), Text: " at"}, {Start: sec(9.8), End: sec(10.4), Text: " last"},
			}},
		{Start: sec(12), End: sec(26), Text: " It was Dr. Smith, who told us that 3 500 people had signed the letter before noon and that the minister would read it aloud in the evening.",
			Words: timedWords(" It was Dr. Smith, who told us that 3 500 people had signed the letter before noon and that the minister would read it aloud in the evening.",
				12.0, 12.1, 12.1, 12.3, 12.3, 12.6, 12.6, 13.0, 13.4, 13.6, 13.6, 13.9, 13.9, 14.0, 14.0, 14.2,
				14.2, 14.5, 14.5, 14.9, 14.9, 15.3, 15.3, 15.5, 15.5, 15.9, 15.9, 16.0, 16.0, 16.4, 16.4, 16.8, 16.8, 17.3,
				20.5, 20.7, 20.7, 20.9, 20.9, 21.0, 21.0, 21.6, 21.6, 21.9, 21.9, 22.2, 22.2, 22.3, 22.3, 22.8,
				22.8, 22.9, 22.9, 23.0, 23.0, 23.6)},
		// whisper.cpp's tokens: pieces of words, the first without a space.
		{Start: sec(27), End: sec(30), Text: "Unbelievable, she said.",
			Words: []providers.Word{
				{Start: sec(27.1), End: sec(27.5), Text: "Un"}, {Start: sec(27.5), End: sec(28.2), Text: "believable,"},
				{Start: sec(28.9), End: sec(29.1), Text: " she"}, {Start: sec(29.1), End: sec(29.4), Text: " said."},
			}},
		// Words that do not spell the text: the renderer falls back to characters.
		{Start: sec(31), End: sec(33), Text: "Something else entirely.",
			Words: []providers.Word{{Start: sec(31), End: sec(31.5), Text: " Other"}, {Start: sec(31.5), End: sec(32), Text: " words"}}},
	},
}

func TestWordGolden(t *testing.T) {
	for _, name := range []string{"srt", "vtt", "verbose_json"} {
		t.Run(name, func(t *testing.T) {
			got, err := Render(wordSample, name)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "words."+name+".golden"), got)
		})
	}
}

// Cues start where a word starts (moved later only to keep the gap after a cue), and a
// cue break falls in the pause rather than where the characters would put it.
func TestWordTimesDriveCueBreaks(t *testing.T) {
	cs := cues(wordSample)
	var starts []time.Duration
	for _, s := range wordSample.Segments[:3] {
		for _, w := range s.Words {
			starts = append(starts, w.Start)
		}
	}
	for i, c := range cs[:len(cs)-1] { // the last is the segment timed by characters
		if !slices.Contains(starts, c.start) {
			t.Errorf("cue %d %q starts at %v, at no word's start", i+1, c.lines, c.start)
		}
	}
	// The first segment breaks at the pause after "night." (3.9 s → 8.0 s), shown until
	// the reading time is over, not at 12 s × its characters' share.
	if got := strings.Join(cs[0].lines, " "); got != "Well, we waited for the results all night." {
		t.Errorf("first cue %q", got)
	}
	if cs[1].start != sec(8) {
		t.Errorf("second cue starts at %v, want 8s (the first word after the pause)", cs[1].start)
	}
	if cs[0].end > sec(8)-minGap || cs[0].end < sec(3.9) {
		t.Errorf("first cue ends at %v", cs[0].end)
	}
	// The same segment without words breaks by characters.
	plain := wordSample.Segments[0]
	plain.Words = nil
	byChars := layoutSegment(plain, RulesFor("en"))
	if len(byChars) != 1 {
		t.Errorf("without words the first segment is %d cues, want 1 (it fits two lines)", len(byChars))
	}
}
