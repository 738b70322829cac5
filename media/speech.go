package media

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"
)

// The speech measure. ffmpeg's silencedetect filter, in the same decoding pass that counts
// the samples (MeasureArgs), reports every stretch of at least SilenceMinimum during which
// no sample rises above SilenceThreshold. What is left of the length is counted as speech.
//
// The numbers were chosen on espeak-ng speech, generated noise and digital silence:
// -35 dBFS (an amplitude of 0.018) keeps every word of espeak-ng's speech and the quiet end
// of its syllables out of the silences, while white noise up to an amplitude of 0.01
// (-40 dBFS, a quiet room's hiss on a phone recording) counts as silence in PCM, and up to
// -43 dBFS once MP3-encoded (the encoder's error lifts some peaks of -40 dBFS white noise
// past the threshold, and those stretches count as speech); 0.5 s is longer
// than the pauses between words and sentences (espeak-ng pauses about 0.3 s at a full
// stop), so a sentence counts whole and only real gaps are taken out. The measure counts
// sound, not voices: music or loud noise counts as speech, which errs on the visitor's
// side (they are only refused a file that is, in effect, silent).
const (
	// SilenceThreshold is the level below which a sample is silent (silencedetect's noise).
	SilenceThreshold = "-35dB"
	// SilenceMinimum is the shortest stretch of silence counted (silencedetect's duration).
	SilenceMinimum = 500 * time.Millisecond
	// SpeechFloor is the least speech a file must hold to be transcribed: below it, a file
	// is refused before payment. It is shorter than any spoken word (espeak-ng says "Yes."
	// in 0.63 s), so a one-word recording is taken; what it refuses is, in effect, silence.
	SpeechFloor = 250 * time.Millisecond
)

// Span is a stretch of a file's audio, on the clock of its decoded samples.
type Span struct {
	Start, End time.Duration
}

// Measurement is what one decoding pass over a file's audio found.
type Measurement struct {
	// Length is how long the decoded samples last.
	Length time.Duration
	// Speech is Length minus the silences: how much of the file is sound worth transcribing.
	Speech time.Duration
	// Silences are the stretches counted as silence, in order, within [0, Length].
	Silences []Span
}

// HasSpeech reports whether the file holds at least SpeechFloor of speech.
func (m Measurement) HasSpeech() bool { return m.Speech >= SpeechFloor }

// silenceFilter is the silencedetect filter of the measure; it follows asetpts, so the
// times it reports are those of the decoded samples.
func silenceFilter() string {
	return "silencedetect=noise=" + SilenceThreshold + ":duration=" +
		strconv.FormatFloat(SilenceMinimum.Seconds(), 'f', -1, 64)
}

// silenceLog collects silencedetect's reports from ffmpeg's standard error as it is
// written, line by line, so a long file's log is never held whole.
type silenceLog struct {
	partial   []byte
	spans     []Span
	open      time.Duration // start of a silence not yet ended, when inSilence
	inSilence bool
}

// maxLogLine bounds a line kept while waiting for its end; silencedetect's are under 100
// bytes, and longer lines (a file's metadata) are not ours to read.
const maxLogLine = 512

func (l *silenceLog) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			if len(l.partial)+len(p) <= maxLogLine {
				l.partial = append(l.partial, p...)
			} else {
				l.partial = append(l.partial[:0], "\x00"...) // too long: spoil the line
			}
			break
		}
		line := p[:i]
		if len(l.partial) > 0 {
			line = append(l.partial, line...)
		}
		l.line(line)
		l.partial = l.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// line reads one line of ffmpeg's log.
func (l *silenceLog) line(line []byte) {
	kind, at, ok := parseSilenceLine(line)
	if !ok {
		return
	}
	switch kind {
	case "silence_start":
		if !l.inSilence {
			l.open, l.inSilence = at, true
		}
	case "silence_end":
		start := time.Duration(0) // an end without a start: silence from the beginning
		if l.inSilence {
			start = l.open
		}
		l.spans = append(l.spans, Span{start, at})
		l.inSilence = false
	}
}

// measurement completes the log with the length the samples reached: a silence still
// open at the end lasts to it, and every span is kept within [0, length].
func (l *silenceLog) measurement(length time.Duration) Measurement {
	if len(l.partial) > 0 {
		l.line(l.partial)
		l.partial = nil
	}
	spans := l.spans
	if l.inSilence {
		spans = append(spans, Span{l.open, length})
	}
	return speechOf(length, spans)
}

// edgeSnap: silencedetect prints times with 6 significant digits (0.1 s for a 7-hour
// file), so a silence that runs to the end of a file may be reported to end a little
// before it. A silence within edgeSnap of the start or the end reaches it.
const edgeSnap = 100 * time.Millisecond

// speechOf returns the measurement of a file of the given length with these silences:
// spans are clipped to [0, length] (snapped to its edges within edgeSnap), ordered and
// merged, and speech is what they leave.
func speechOf(length time.Duration, silences []Span) Measurement {
	if length < 0 {
		length = 0
	}
	var kept []Span
	for _, s := range silences {
		if s.Start <= edgeSnap {
			s.Start = 0
		}
		if s.End >= length-edgeSnap {
			s.End = length
		}
		s.Start, s.End = max(s.Start, 0), min(s.End, length)
		if s.End > s.Start {
			kept = append(kept, s)
		}
	}
	slices.SortFunc(kept, func(a, b Span) int { return cmp.Compare(a.Start, b.Start) })
	var merged []Span
	silent := time.Duration(0)
	for _, s := range kept {
		if n := len(merged); n > 0 && s.Start <= merged[n-1].End {
			if s.End > merged[n-1].End {
				silent += s.End - merged[n-1].End
				merged[n-1].End = s.End
			}
			continue
		}
		merged = append(merged, s)
		silent += s.End - s.Start
	}
	return Measurement{Length: length, Speech: length - silent, Silences: merged}
}

// silencePrefix starts every line silencedetect writes; lines of the file's own metadata
// are indented, so a tag cannot pass for a report.
var silencePrefix = []byte("[silencedetect @ ")

// parseSilenceLine reads one silencedetect report, "[silencedetect @ 0x…] silence_start:
// 5.85" or "… silence_end: 26.151 | silence_duration: 20.3", returning its kind and time.
// Anything else, or a time that is not a number of seconds in [0, 1e9], is not a report.
func parseSilenceLine(line []byte) (kind string, at time.Duration, ok bool) {
	rest, found := bytes.CutPrefix(line, silencePrefix)
	if !found {
		return "", 0, false
	}
	i := bytes.Index(rest, []byte("] "))
	if i < 0 {
		return "", 0, false
	}
	rest = rest[i+2:]
	for _, k := range []string{"silence_start", "silence_end"} {
		v, found := bytes.CutPrefix(rest, []byte(k+": "))
		if !found {
			continue
		}
		if j := bytes.IndexByte(v, ' '); j >= 0 {
			v = v[:j]
		}
		secs, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsNaN(secs) || secs < 0 || secs > 1e9 {
			return "", 0, false
		}
		return k, time.Duration(math.Round(secs * float64(time.Second))), true
	}
	return "", 0, false
}

// parseSilences reads a whole ffmpeg log of a file whose samples last length.
func parseSilences(log []byte, length time.Duration) Measurement {
	var l silenceLog
	l.Write(log)
	return l.measurement(length)
}
