package transcript

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"parla/providers"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// sample is the one transcript every golden file is rendered from: short and long segments,
// Japanese, Arabic and emoji text, a zero-length segment, overlapping and out-of-order
// segments, a word longer than a line, text that needs escaping and times past one hour.
var sample = providers.Transcript{
	Language: "english",
	Duration: sec(3730.5),
	Segments: []providers.Segment{
		{Start: 0, End: sec(2.5), Text: " Hello, and welcome to Parla."},
		{Start: sec(2.5), End: sec(9.8), Text: " This sentence is deliberately much longer than a single subtitle line can hold, so it is shared out over several readable cues."},
		{Start: sec(9.8), End: sec(14), Text: "東京タワーは、日本の東京都港区にある電波塔です。高さは三百三十三メートルで、完成当時は世界一高い自立式鉄塔でした。"},
		{Start: sec(14), End: sec(16), Text: "مرحبا بكم في بارلا، خدمة تحويل الكلام إلى نص."},
		{Start: sec(16), End: sec(16), Text: "Zero length 🎉 with emoji 👩‍💻."},
		{Start: sec(15.5), End: sec(18.25), Text: "This one overlaps the one before."},
		{Start: sec(18), End: sec(17), Text: "Ends before it starts."},
		{Start: sec(20), End: sec(23), Text: "Pneumonoultramicroscopicsilicovolcanoconiosis-and-more is one long word."},
		{Start: sec(3599.5), End: sec(3601.25), Text: "Just before and after the first hour."},
		{Start: sec(3725), End: sec(3727.5), Text: "  <b>Tags</b> & arrows --> stay plain text.  "},
		{Start: sec(3720), End: sec(3721), Text: "Starts before the previous segment."},
		{Start: sec(3730), End: sec(3730), Text: "Last words."},
	},
}

func TestGolden(t *testing.T) {
	for _, name := range providers.TranscriptFormats {
		t.Run(name, func(t *testing.T) {
			got, err := Render(sample, name)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".golden"), got)
		})
	}
}

func TestSubtitleStructure(t *testing.T) {
	for _, format := range []string{"srt", "vtt"} {
		t.Run(format, func(t *testing.T) {
			out, err := Render(sample, format)
			if err != nil {
				t.Fatal(err)
			}
			cs := parseSubtitles(t, string(out), format)
			// Every segment's words are there, in order.
			var words []string
			for _, c := range cs {
				words = append(words, strings.Fields(strings.Join(c.lines, " "))...)
			}
			got := strings.Join(words, " ")
			for _, s := range sample.Segments {
				text := strings.Join(strings.Fields(s.Text), " ")
				if format == "srt" {
					text = strings.ReplaceAll(text, "-->", "->")
				}
				if !strings.Contains(strings.ReplaceAll(got, " ", ""), strings.ReplaceAll(text, " ", "")) {
					t.Errorf("segment %q missing from the cues", s.Text)
				}
			}
			checkCues(t, cs, subtitleRules(sample))
		})
	}
}

// checkCues asserts what makes a subtitle file valid and the hard rules of r (see Rules):
// starts never go back, every cue ends after it starts and lasts at most r.MaxDuration,
// r.MinGap at least between one cue's end and the next one's start, at most r.Lines lines
// of at most r.LineRunes runes, unless the line is one unit that no rule may break (then
// alone on its line). A segment in another kind of script than the transcript's language
// is laid out by its script's rules, so a line may hold as many runes as the larger limit
// allows. Only times a day short of the largest time.Duration are held to the gap and the
// length: a broken engine's times past them saturate there.
func checkCues(t *testing.T, cs []cue, r Rules) {
	t.Helper()
	var prev time.Duration
	for i, c := range cs {
		if c.start < prev {
			t.Fatalf("cue %d starts at %v, before the previous start %v", i+1, c.start, prev)
		}
		prev = c.start
		if c.end <= c.start && c.start < maxTime {
			t.Fatalf("cue %d: end %v not after start %v", i+1, c.end, c.start)
		}
		if c.end-c.start > r.MaxDuration {
			t.Fatalf("cue %d lasts %v, more than %v", i+1, c.end-c.start, r.MaxDuration)
		}
		if i > 0 && c.start < maxTime && c.start-cs[i-1].end < r.MinGap {
			t.Fatalf("cue %d starts %v after the previous one ends, less than %v", i+1, c.start-cs[i-1].end, r.MinGap)
		}
		if len(c.lines) == 0 || len(c.lines) > r.Lines {
			t.Fatalf("cue %d has %d lines", i+1, len(c.lines))
		}
		limit := max(r.LineRunes, segmentRules(r, strings.Join(c.lines, "")).LineRunes)
		for _, l := range c.lines {
			n := utf8.RuneCountInString(l)
			if n <= limit {
				continue
			}
			if us := units(l); len(us) > 1 {
				t.Fatalf("cue %d: line of %d runes (limit %d) holds %d units: %q", i+1, n, limit, len(us), l)
			}
		}
	}
}

var timing = regexp.MustCompile(`^(\d{2,}):(\d{2}):(\d{2})[,.](\d{3}) --> (\d{2,}):(\d{2}):(\d{2})[,.](\d{3})$`)

// parseSubtitles reads an srt or vtt file back into cues, failing on anything malformed.
func parseSubtitles(t *testing.T, s, format string) []cue {
	t.Helper()
	if !strings.HasSuffix(s, "\n\n") && s != "" {
		t.Fatalf("%s does not end with a blank line", format)
	}
	blocks := strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n")
	if format == "vtt" {
		if blocks[0] != "WEBVTT" {
			t.Fatalf("vtt starts with %q", blocks[0])
		}
		blocks = blocks[1:]
	}
	sep := map[string]string{"srt": ",", "vtt": "."}[format]
	var cs []cue
	for i, b := range blocks {
		lines := strings.Split(b, "\n")
		if format == "srt" {
			if lines[0] != fmt.Sprint(i+1) {
				t.Fatalf("srt cue %d numbered %q", i+1, lines[0])
			}
			lines = lines[1:]
		}
		m := timing.FindStringSubmatch(lines[0])
		if m == nil || !strings.Contains(lines[0], sep) {
			t.Fatalf("%s cue %d: bad timing line %q", format, i+1, lines[0])
		}
		c := cue{start: parseTime(m[1:5]), end: parseTime(m[5:9])}
		for _, l := range lines[1:] {
			if strings.TrimSpace(l) == "" || strings.Contains(l, "-->") {
				t.Fatalf("%s cue %d: bad text line %q", format, i+1, l)
			}
			if format == "vtt" {
				if strings.Contains(l, "<") {
					t.Fatalf("vtt cue %d: unescaped text %q", i+1, l)
				}
				l = html.UnescapeString(l)
			}
			c.lines = append(c.lines, l)
		}
		cs = append(cs, c)
	}
	return cs
}

func parseTime(f []string) time.Duration {
	h, _ := strconv.Atoi(f[0])
	m, _ := strconv.Atoi(f[1])
	s, _ := strconv.Atoi(f[2])
	ms, _ := strconv.Atoi(f[3])
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(s)*time.Second + time.Duration(ms)*time.Millisecond
}

func TestVerboseJSON(t *testing.T) {
	out, err := Render(sample, "verbose_json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"task", "language", "duration", "text", "segments"} {
		if _, ok := v[key]; !ok {
			t.Errorf("no %q", key)
		}
	}
	segs := v["segments"].([]any)
	if len(segs) != len(sample.Segments) {
		t.Fatalf("%d segments, want %d", len(segs), len(sample.Segments))
	}
	var joined strings.Builder
	for i, s := range segs {
		seg := s.(map[string]any)
		for _, key := range []string{"id", "seek", "start", "end", "text", "tokens", "temperature", "avg_logprob", "compression_ratio", "no_speech_prob"} {
			if _, ok := seg[key]; !ok {
				t.Errorf("segment %d has no %q", i, key)
			}
		}
		if seg["end"].(float64) < seg["start"].(float64) {
			t.Errorf("segment %d ends before it starts", i)
		}
		joined.WriteString(seg["text"].(string))
	}
	// Joining the segments gives the text, as with OpenAI's leading-space convention.
	if got := strings.TrimSpace(joined.String()); got != v["text"] {
		t.Errorf("joined segments %q\n!= text %q", got, v["text"])
	}
}

func TestVerboseJSONSaysWhatTaskItHolds(t *testing.T) {
	for _, tc := range []struct {
		translated bool
		want       string
	}{{false, "transcribe"}, {true, "translate"}} {
		tr := sample
		tr.Translated = tc.translated
		out, err := Render(tr, "verbose_json")
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Task string }
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		if v.Task != tc.want {
			t.Errorf("translated=%v: task %q, want %q", tc.translated, v.Task, tc.want)
		}
	}
}

func TestInfo(t *testing.T) {
	tests := []struct {
		format, ext, contentType string
		ok                       bool
	}{
		{"", ".json", "application/json", true},
		{"json", ".json", "application/json", true},
		{"text", ".txt", "text/plain; charset=utf-8", true},
		{"srt", ".srt", "application/x-subrip", true},
		{"verbose_json", ".json", "application/json", true},
		{"vtt", ".vtt", "text/vtt", true},
		{"docx", "", "", false},
		{"JSON", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			ext, ct, ok := Info(tt.format)
			if ext != tt.ext || ct != tt.contentType || ok != tt.ok {
				t.Errorf("Info(%q) = %q, %q, %v; want %q, %q, %v", tt.format, ext, ct, ok, tt.ext, tt.contentType, tt.ok)
			}
		})
	}
	for _, f := range providers.TranscriptFormats {
		if _, _, ok := Info(f); !ok {
			t.Errorf("format %q has no Info", f)
		}
	}
}

func TestRenderSmallCases(t *testing.T) {
	textOnly := providers.Transcript{Text: "  Just text, no segments.  ", Duration: sec(4.2)}
	empty := providers.Transcript{}
	segsOnly := providers.Transcript{Segments: []providers.Segment{
		{Start: 0, End: sec(1), Text: " One."}, {Start: sec(1), End: sec(2), Text: "二。"}, {Start: sec(2), End: sec(3), Text: "Three."},
	}}
	// Engines can cut a character in two between segments (whisper.cpp splits at tokens).
	brokenText := providers.Transcript{Text: "caf\xc3 \xe6\x9d"}
	arrows := providers.Transcript{Segments: []providers.Segment{{Start: 0, End: sec(1), Text: "a --> b ---> c ----> d"}}}
	brokenSegs := providers.Transcript{Segments: []providers.Segment{{Start: 0, End: sec(1), Text: "\x9d\xb1東京"}}}
	tests := []struct {
		name   string
		t      providers.Transcript
		format string
		want   string
	}{
		{"empty format is json", textOnly, "", `{"text":"Just text, no segments."}` + "\n"},
		{"text", textOnly, "text", "Just text, no segments.\n"},
		{"srt without segments spans the duration", textOnly, "srt", "1\n00:00:00,000 --> 00:00:04,200\nJust text, no segments.\n\n"},
		{"vtt without segments spans the duration", textOnly, "vtt", "WEBVTT\n\n00:00:00.000 --> 00:00:04.200\nJust text, no segments.\n\n"},
		{"empty srt", empty, "srt", ""},
		{"empty vtt", empty, "vtt", "WEBVTT\n\n"},
		{"empty json", empty, "json", `{"text":""}` + "\n"},
		{"empty verbose_json", empty, "verbose_json", `{"task":"transcribe","language":"","duration":0,"text":"","segments":[]}` + "\n"},
		{"text joined from segments", segsOnly, "text", "One.二。 Three.\n"},
		{"invalid UTF-8 in text", brokenText, "text", "caf\uFFFD \uFFFD\n"},
		// 22 characters at 17 a second need 1.2942 s, 1.295 in whole milliseconds: the cue is extended (the audio's
		// duration is unknown, so nothing bounds it).
		{"no arrow survives in srt", arrows, "srt", "1\n00:00:00,000 --> 00:00:01,295\na -> b -> c -> d\n\n"},
		{"arrows escaped in vtt", arrows, "vtt", "WEBVTT\n\n00:00:00.000 --> 00:00:01.295\na --&gt; b ---&gt; c ----&gt; d\n\n"},
		{"invalid UTF-8 in srt", brokenSegs, "srt", "1\n00:00:00,000 --> 00:00:01,000\n\uFFFD東京\n\n"},
		{"invalid UTF-8 in vtt", brokenSegs, "vtt", "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n\uFFFD東京\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.t, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if _, err := Render(textOnly, "docx"); err == nil || !strings.Contains(err.Error(), "docx") {
		t.Errorf("unknown format: err = %v", err)
	}
}

func TestTimestamp(t *testing.T) {
	tests := []struct {
		d    time.Duration
		sep  byte
		want string
	}{
		{0, ',', "00:00:00,000"},
		{sec(1), ',', "00:00:01,000"},
		{sec(2.5), '.', "00:00:02.500"},
		{sec(3600), '.', "01:00:00.000"},
		{sec(3601.25), ',', "01:00:01,250"},
		{100*time.Hour + sec(59.9999), '.', "100:00:59.999"},
		{-time.Second, ',', "00:00:00,000"},
	}
	for _, tt := range tests {
		if got := timestamp(tt.d, tt.sep); got != tt.want {
			t.Errorf("timestamp(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// golden compares got with the file at path, or writes it there with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update after checking the change):\n%s", path, got)
	}
}
