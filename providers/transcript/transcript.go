// Package transcript renders a providers.Transcript in the formats a visitor can order
// (json, text, srt, verbose_json, vtt), in the shapes OpenAI's transcription API returns, so
// a file looks the same whichever engine made it. Every engine's transcript comes here.
//
// What nobody said is left out of every format (Clean, called by Render):
//
//   - Non-speech annotations and markers: anything in square brackets ([BLANK_AUDIO],
//     [ Silence ], [MUSIC], [inaudible]), whisper's special tokens (<|endoftext|>),
//     parentheses holding a sound word in one of the served languages ((music),
//     (upbeat music), (laughs), （拍手）), short spans between asterisks (*applause*) and
//     music notes (♪; the sung words between them stay). Words are cleaned alike.
//   - Hallucinations over silence, by this rule: a segment is dropped when (1) no letter or
//     digit is left in it; (2) it is a subtitle credit ("Subtitles by the Amara.org
//     community", "Субтитры сделал …", "字幕由…"), which nobody speaks; (3) it is one of
//     whisper's usual inventions ("Thank you.", "Thanks for watching!", "ご視聴ありがとう
//     ございました", "Продолжение следует…": hallucinationPhrases) spoken at under 3
//     letters a second (over its words' time when it has word times; a character of
//     Chinese or Japanese counts two), where a person takes a second or two; (4) it holds at most 12 letters over 8 s or more; (5) it
//     repeats the segment before it for the third time or more in a row (the decoder
//     looping; two in a row are kept). Inside a segment, a phrase repeated 5 times or
//     more in a row (10 words or 20 characters at least) is kept once. When segments
//     change, the text is rebuilt from the rest.
//
// Decisions the formats leave open, made once here:
//
//   - Segment text is trimmed of surrounding spaces. In verbose_json each segment's text
//     carries OpenAI's leading space (" Hello.") unless it starts with a script written
//     without spaces (Chinese, Japanese, Thai, …), so that joining the segment texts and
//     trimming gives the transcript's text, as with OpenAI. verbose_json keeps the engine's
//     order and zero-length segments, as OpenAI does, and carries the words at the top
//     level ("words": [{"word", "start", "end"}], no leading space) when the engine timed
//     them, as OpenAI does for timestamp_granularities[]=word.
//   - Subtitles (srt, vtt) follow professional subtitling norms, one table of Rules per
//     language (rules.go; the transcript's language by code or engine name, else its
//     script): at most 2 lines of 42 characters (Russian 39, Chinese 16, Japanese 13),
//     cues of 5/6 s to 7 s, at most about 17 characters a second (Chinese 9, Japanese 4),
//     83 ms (2 frames) at least between cues. A segment is cut into cues and lines where
//     the text reads best (after a sentence or a clause, at a pause, before a conjunction
//     or preposition; never after one, nor inside a number like "3 500", a title and its
//     name like "Dr. Smith", or a name), lines of similar length preferred. With word
//     times (Segment.Words that spell the segment's letters, with or without punctuation)
//     cues start and end at real word times and a pause ends a cue; without, the
//     segment's time is shared out by characters. A word longer than a line stays whole
//     on its own line. A segment in another kind of script than the language (Japanese in
//     an English transcript) takes its script's rules.
//   - Times are made valid rather than trusted. Everywhere: a negative time becomes 0, one
//     past about 292 years (where time.Duration ends) is capped, and an end before its start
//     is raised to the start. In srt and vtt also: a segment that starts before the previous
//     one is moved to the previous start (WebVTT requires non-decreasing cue starts), and a
//     zero-length segment (start == end) is shown for ZeroLengthCue, cut short by the next
//     segment's start or the end of the audio when they come later. Then the hard rules
//     are kept: no cue longer than 7 s; a cue running into the next one is cut 83 ms
//     before it (down to its own length or 5/6 s at least), and what still overlaps
//     (overlapping segments) moves later. Last, a cue shorter than 5/6 s or read too fast
//     is extended into the silence after it, as far as the next cue and the audio allow.
//     Line count, line length (but for one unbreakable word), gap and longest cue always
//     hold; shortest cue and reading speed are best effort (the conformance test reports
//     how often they give way).
//   - A transcript with text but no segments gets one subtitle segment spanning its Duration.
//   - Speakers (Segment.Speaker, where the engine tells them apart): a voice span on every
//     vtt cue (<v A>), "A: " where a turn starts in srt and text (one paragraph a turn),
//     "speaker" on each verbose_json segment, nothing in json (speakers.go).
package transcript

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"parla/providers"
)

// format is one orderable transcript format.
type format struct {
	ext         string
	contentType string
	render      func(providers.Transcript) ([]byte, error)
}

// formats holds every name in providers.TranscriptFormats.
var formats = map[string]format{
	"json":         {".json", "application/json", renderJSON},
	"text":         {".txt", "text/plain; charset=utf-8", renderText},
	"srt":          {".srt", "application/x-subrip", renderSRT},
	"verbose_json": {".json", "application/json", renderVerboseJSON},
	"vtt":          {".vtt", "text/vtt", renderVTT},
}

// DefaultFormat is what an empty format name means.
const DefaultFormat = "json"

// Info returns the file extension (with the dot) and the MIME type a transcript in format is
// delivered with. An empty format means DefaultFormat; ok is false for an unknown one.
func Info(name string) (ext, contentType string, ok bool) {
	f, ok := formats[normalize(name)]
	return f.ext, f.contentType, ok
}

// Render returns t in the named format (one of providers.TranscriptFormats; empty means
// DefaultFormat).
func Render(t providers.Transcript, name string) ([]byte, error) {
	f, ok := formats[normalize(name)]
	if !ok {
		return nil, fmt.Errorf("unknown transcript format %q", name)
	}
	out, err := f.render(Delivered(t))
	if err != nil {
		return nil, fmt.Errorf("rendering %s transcript: %w", normalize(name), err)
	}
	return out, nil
}

// Delivered is an engine's transcript as Render delivers it, in every format: valid UTF-8,
// cleaned (Clean). The editor starts from it, so a visitor's edit keeps what the cleaner
// dropped out.
func Delivered(t providers.Transcript) providers.Transcript {
	return Clean(validUTF8(t))
}

// validUTF8 returns t with every run of invalid UTF-8 in its texts replaced by U+FFFD, as
// encoding/json already does for the json formats: engines can split a character between
// segments (whisper.cpp cuts at token boundaries), and srt, vtt and text files are UTF-8.
// t's segments are copied, never changed.
func validUTF8(t providers.Transcript) providers.Transcript {
	t.Text = strings.ToValidUTF8(t.Text, "\uFFFD")
	if slices.ContainsFunc(t.Segments, func(s providers.Segment) bool { return !utf8.ValidString(s.Text) }) {
		t.Segments = slices.Clone(t.Segments)
		for i := range t.Segments {
			t.Segments[i].Text = strings.ToValidUTF8(t.Segments[i].Text, "\uFFFD")
		}
	}
	return t
}

func normalize(name string) string {
	if name == "" {
		return DefaultFormat
	}
	return name
}

// Join builds a transcript's whole text from its segments: each trimmed, separated by a
// space except before text in a script written without spaces.
func Join(segments []providers.Segment) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteString(spaced(s.Text))
	}
	return strings.TrimSpace(b.String())
}

// text is the transcript's text, trimmed, or its segments joined when it has none.
func text(t providers.Transcript) string {
	if s := strings.TrimSpace(t.Text); s != "" {
		return s
	}
	return Join(t.Segments)
}

// spaced trims s and gives it OpenAI's leading space unless it is empty or starts with a
// script written without spaces.
func spaced(s string) string {
	s = strings.TrimSpace(s)
	if r, _ := utf8.DecodeRuneInString(s); s == "" || unspaced(r) {
		return s
	}
	return " " + s
}

// noSpaceScripts are written without spaces between words, so a line may break between any
// two of their characters and segments join without a space.
var noSpaceScripts = []*unicode.RangeTable{
	unicode.Han, unicode.Hiragana, unicode.Katakana,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar,
}

func unspaced(r rune) bool {
	return unicode.In(r, noSpaceScripts...)
}
