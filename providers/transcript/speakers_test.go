package transcript

import (
	"encoding/json"
	"strings"
	"testing"

	"parla/providers"
)

// diarized is a transcript whose engine told speakers apart: A speaks twice in a row
// (one turn), then a name the visitor gave with characters WebVTT reserves, then a
// segment without a speaker.
var diarized = providers.Transcript{
	Language: "english",
	Duration: sec(12),
	Segments: []providers.Segment{
		{Start: 0, End: sec(2), Text: "Good evening.", Speaker: "A"},
		{Start: sec(2), End: sec(4), Text: "Welcome to the programme.", Speaker: "A"},
		{Start: sec(4), End: sec(7), Text: "Thank you for having me.", Speaker: "Dr. Ortega & <Co>\n"},
		{Start: sec(8), End: sec(10), Text: "And so do I."},
	},
}

// Speakers are named the way each format can: a voice span on every vtt cue, "Name: "
// where a turn starts in srt and text, a "speaker" per verbose_json segment, none in json.
func TestSpeakers(t *testing.T) {
	for format, want := range map[string]string{
		"srt": "1\n00:00:00,000 --> 00:00:01,917\nA: Good evening.\n\n" +
			"2\n00:00:02,000 --> 00:00:03,917\nWelcome to the programme.\n\n" +
			"3\n00:00:04,000 --> 00:00:07,000\nDr. Ortega & <Co>:\nThank you for having me.\n\n" +
			"4\n00:00:08,000 --> 00:00:10,000\nAnd so do I.\n\n",
		"vtt": "WEBVTT\n\n00:00:00.000 --> 00:00:01.917\n<v A>Good evening.\n\n" +
			"00:00:02.000 --> 00:00:03.917\n<v A>Welcome to the programme.\n\n" +
			"00:00:04.000 --> 00:00:07.000\n<v Dr. Ortega &amp; &lt;Co&gt;>Thank you for having me.\n\n" +
			"00:00:08.000 --> 00:00:10.000\nAnd so do I.\n\n",
		"text": "A: Good evening. Welcome to the programme.\nDr. Ortega & <Co>: Thank you for having me.\nAnd so do I.\n",
		"json": `{"text":"Good evening. Welcome to the programme. Thank you for having me. And so do I."}` + "\n",
	} {
		got, err := Render(diarized, format)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s:\ngot  %q\nwant %q", format, got, want)
		}
	}
	raw, _ := Render(diarized, "verbose_json")
	var v struct{ Segments []map[string]any }
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var speakers []string
	for _, s := range v.Segments {
		name, _ := s["speaker"].(string)
		speakers = append(speakers, name)
	}
	if strings.Join(speakers, "|") != "A|A|Dr. Ortega & <Co>|" {
		t.Errorf("verbose_json speakers %q", speakers)
	}
}
