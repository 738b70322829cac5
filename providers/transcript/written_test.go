package transcript

import (
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"
	"time"

	"parla/providers"
)

// asWritten is what a visitor may save in the editor that the engine cleaner would take
// for engine noise: a lone "Thank you.", annotations, punctuation, emoji, music notes,
// repeats, plus text that needs each format's escaping.
func asWritten() providers.Transcript {
	texts := []string{"Thank you.", "[MUSIC]", "(laughs)", "...", "👍", "♪ la la la ♪",
		"Yes, indeed.", "Yes, indeed.", "Yes, indeed.", "Yes, indeed.", "a <b> & c --> d"}
	t := providers.Transcript{Language: "english", Duration: time.Duration(len(texts)*5) * time.Second}
	for i, s := range texts {
		t.Segments = append(t.Segments, providers.Segment{Start: time.Duration(i*5) * time.Second,
			End: time.Duration(i*5+5) * time.Second, Text: s})
	}
	t.Text = Join(t.Segments)
	return t
}

// servedWords reads the words a rendered file carries, in order, undoing nothing but the
// format's own frame: srt's numbers and timing lines, vtt's header and timing lines, the
// json formats' fields.
func servedWords(t *testing.T, format string, body []byte) []string {
	t.Helper()
	var words []string
	switch format {
	case "json":
		var v struct{ Text string }
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		return strings.Fields(v.Text)
	case "verbose_json":
		var v struct {
			Text     string
			Segments []struct{ Text string }
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		for _, s := range v.Segments {
			words = append(words, strings.Fields(s.Text)...)
		}
		if !slices.Equal(words, strings.Fields(v.Text)) {
			t.Errorf("verbose_json's text %q is not its segments %q", v.Text, words)
		}
		return words
	case "text":
		return strings.Fields(string(body))
	}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "WEBVTT" || strings.Contains(line, " --> ") || isCueNumber(line) {
			continue
		}
		words = append(words, strings.Fields(line)...)
	}
	return words
}

func isCueNumber(line string) bool {
	_, err := fmt.Sscanf(line, "%d\n", new(int))
	return err == nil && strings.Trim(line, "0123456789") == ""
}

// writtenWords is the words of every segment as the format must serve them: unchanged but
// for its own escaping.
func writtenWords(format string, tr providers.Transcript) []string {
	var words []string
	for _, s := range tr.Segments {
		text := s.Text
		switch format {
		case "srt":
			text = srtText(text)
		case "vtt":
			text = vttEscaper.Replace(text)
		}
		words = append(words, strings.Fields(text)...)
	}
	return words
}

// A visitor's words are served as written in every format: nothing dropped, merged or
// rewritten (the engine cleaner dropped "Thank you.", "[MUSIC]", "(laughs)", "...", "👍",
// served "la la la" and two of four "Yes, indeed.").
func TestRenderWrittenKeepsEveryWord(t *testing.T) {
	lone := providers.Transcript{Language: "english", Duration: 5 * time.Second,
		Segments: []providers.Segment{{Start: 0, End: 5 * time.Second, Text: "Thank you."}}, Text: "Thank you."}
	many := providers.Transcript{Language: "english", Duration: 2000 * time.Second}
	for i := range 20_000 {
		many.Segments = append(many.Segments, providers.Segment{Start: time.Duration(i) * 100 * time.Millisecond,
			End: time.Duration(i+1) * 100 * time.Millisecond, Text: "c"})
	}
	many.Text = Join(many.Segments)
	for name, tr := range map[string]providers.Transcript{"lone thanks": lone, "annotations and repeats": asWritten(), "20,000 cues of c": many} {
		for _, format := range providers.TranscriptFormats {
			t.Run(name+"/"+format, func(t *testing.T) {
				body, err := RenderWritten(tr, format)
				if err != nil {
					t.Fatal(err)
				}
				got, want := servedWords(t, format, body), writtenWords(format, tr)
				if !slices.Equal(got, want) {
					t.Errorf("served %d words, written %d:\n%.400q\nwant\n%.400q", len(got), len(want), got, want)
				}
			})
		}
	}
	// vtt's escaping is the only change, and it reads back as written.
	body, _ := RenderWritten(asWritten(), "vtt")
	if !strings.Contains(html.UnescapeString(string(body)), "a <b> & c --> d") {
		t.Errorf("vtt does not read back as written:\n%s", body)
	}
}
