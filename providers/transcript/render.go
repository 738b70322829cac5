package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"parla/providers"
)

// renderJSON is OpenAI's "json" shape: {"text": "..."}.
func renderJSON(t providers.Transcript) ([]byte, error) {
	return marshal(struct {
		Text string `json:"text"`
	}{text(t)})
}

// renderText is the bare text and a newline; with speakers, a paragraph a turn (speakerText).
func renderText(t providers.Transcript) ([]byte, error) {
	if hasSpeakers(t.Segments) {
		return []byte(speakerText(t) + "\n"), nil
	}
	return []byte(text(t) + "\n"), nil
}

// verbose is OpenAI's "verbose_json" shape.
type verbose struct {
	Task     string           `json:"task"`
	Language string           `json:"language"`
	Duration float64          `json:"duration"`
	Text     string           `json:"text"`
	Segments []verboseSegment `json:"segments"`
	// Words are every segment's words in order, as OpenAI answers them with
	// timestamp_granularities[]=word: present only when the engine timed words.
	Words []verboseWord `json:"words,omitempty"`
}

// verboseWord is one timed word, its text without the leading space, as OpenAI's.
type verboseWord struct {
	Word  string  `json:"word"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// verboseSegment carries the keys OpenAI's segments have. The fields an engine here does not
// produce (tokens, decoding statistics) are present with neutral values, so clients that
// read them keep working.
type verboseSegment struct {
	ID               int     `json:"id"`
	Seek             int     `json:"seek"`
	Start            float64 `json:"start"`
	End              float64 `json:"end"`
	Text             string  `json:"text"`
	Tokens           []int   `json:"tokens"`
	Temperature      float64 `json:"temperature"`
	AvgLogprob       float64 `json:"avg_logprob"`
	CompressionRatio float64 `json:"compression_ratio"`
	NoSpeechProb     float64 `json:"no_speech_prob"`
	// Speaker is diarized_json's, when the engine told speakers apart.
	Speaker string `json:"speaker,omitempty"`
}

func renderVerboseJSON(t providers.Transcript) ([]byte, error) {
	task := "transcribe"
	if t.Translated {
		task = "translate"
	}
	v := verbose{
		Task:     task,
		Language: t.Language,
		Duration: seconds(t.Duration),
		Text:     text(t),
		Segments: make([]verboseSegment, 0, len(t.Segments)),
	}
	for i, s := range t.Segments {
		// The engine's times, only made valid: verbose_json has no ordering rule.
		s = clampTimes(s, 0)
		v.Segments = append(v.Segments, verboseSegment{
			ID:      i,
			Start:   seconds(s.Start),
			End:     seconds(s.End),
			Text:    spaced(s.Text),
			Tokens:  []int{},
			Speaker: speakerName(s.Speaker),
		})
		for _, w := range s.Words {
			text := strings.TrimSpace(w.Text)
			if text == "" {
				continue
			}
			// Made valid like the segments' times.
			w.Start = min(max(w.Start, 0), maxTime)
			w.End = min(max(w.End, w.Start), maxTime)
			v.Words = append(v.Words, verboseWord{Word: text, Start: seconds(w.Start), End: seconds(w.End)})
		}
	}
	return marshal(v)
}

// seconds is d in seconds, to the millisecond.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond).Milliseconds()) / 1000
}

// marshal encodes v as one line of JSON without HTML escaping (a transcript is a file, not
// a page fragment: "<" stays "<").
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// renderSRT numbers the cues from 1, with comma-separated milliseconds and a blank line
// after each cue. SRT has no escaping; a "-->" in the text, which readers could take for a
// timing line, becomes "->" (see srtText). A speaker is named where a turn starts.
func renderSRT(t providers.Transcript) ([]byte, error) {
	var b bytes.Buffer
	for i, c := range cues(labelled(t)) {
		fmt.Fprintf(&b, "%d\n%s --> %s\n", i+1, timestamp(c.start, ','), timestamp(c.end, ','))
		for _, l := range c.lines {
			b.WriteString(srtText(l))
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// srtText shortens every "-->" in l to "->" until none is left: one pass would turn "--->"
// into "-->".
func srtText(l string) string {
	for strings.Contains(l, "-->") {
		l = strings.ReplaceAll(l, "-->", "->")
	}
	return l
}

// vttEscaper escapes what WebVTT cue text reserves (it also turns "-->" into "--&gt;").
var vttEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// renderVTT writes the WEBVTT header and the cues, hours always present; a cue whose
// segment names its speaker opens a voice span (<v A>), closed by the cue's end.
func renderVTT(t providers.Transcript) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("WEBVTT\n\n")
	for _, c := range cues(t) {
		fmt.Fprintf(&b, "%s --> %s\n", timestamp(c.start, '.'), timestamp(c.end, '.'))
		if c.speaker != "" {
			// The annotation may hold neither "&" nor ">" but as references.
			fmt.Fprintf(&b, "<v %s>", vttEscaper.Replace(c.speaker))
		}
		for _, l := range c.lines {
			b.WriteString(vttEscaper.Replace(l))
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// timestamp formats d as HH:MM:SS<sep>mmm (hours grow past two digits when they must),
// truncated to the millisecond.
func timestamp(d time.Duration, sep byte) string {
	ms := max(d.Milliseconds(), 0)
	h, ms := ms/3_600_000, ms%3_600_000
	m, ms := ms/60_000, ms%60_000
	s, ms := ms/1000, ms%1000
	return fmt.Sprintf("%02d:%02d:%02d%c%03d", h, m, s, sep, ms)
}
