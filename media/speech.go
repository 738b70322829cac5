package media

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"time"
)

// The speech measure. In the same decoding pass that counts the samples the engines get
// (PCMArgs), every stretch of at least SilenceMinimum during which no sample rises to
// SilenceThreshold is a silence (silenceScan, the rule of ffmpeg's silencedetect filter,
// which measured before on the file's own clock). What is left of the length is speech.
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
	// SilenceThreshold is the level below which a sample is silent (silentBelow).
	SilenceThreshold = "-35dB"
	// SilenceMinimum is the shortest stretch of silence counted.
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

// silentBelow is SilenceThreshold as a sample's amplitude: 10^(-35/20).
var silentBelow = float32(math.Pow(10, -35.0/20))

// silenceRun is SilenceMinimum in samples at PCMRate.
const silenceRun = int64(SilenceMinimum / (time.Second / PCMRate))

// silenceScan reads the mono float32 samples at PCMRate that the engines get (PCMArgs)
// as ffmpeg writes them, and counts them and the silences in them: a stretch of at least
// SilenceMinimum in which no sample rises to SilenceThreshold. Times are sample counts,
// so nothing the container says about time can move them. Past limit samples (0: none)
// it takes no more, and its Write fails so that ffmpeg stops.
type silenceScan struct {
	split f32Split
	limit int64
	n     int64 // samples counted
	quiet int64 // silent samples in a row, up to the last one counted
	spans []Span
}

// errPastLimit stops ffmpeg once a scan has counted its limit.
var errPastLimit = errors.New("past the length limit")

// Write counts the whole samples in p. It fails with errPastLimit once limit samples are
// counted, never otherwise.
func (s *silenceScan) Write(p []byte) (int, error) {
	if s.full() {
		return 0, errPastLimit
	}
	s.split.each(p, s.sample)
	return len(p), nil
}

func (s *silenceScan) sample(x float32) {
	if s.full() {
		return
	}
	if x < silentBelow && x > -silentBelow {
		s.quiet++
	} else {
		s.closeSilence()
		s.quiet = 0
	}
	s.n++
}

// full reports that the scan counted its limit.
func (s *silenceScan) full() bool { return s.limit > 0 && s.n >= s.limit }

// closeSilence keeps the stretch of silent samples that ends at the last one counted, if
// it is long enough to be a silence.
func (s *silenceScan) closeSilence() {
	if s.quiet >= silenceRun {
		s.spans = append(s.spans, Span{samplesTime(s.n - s.quiet), samplesTime(s.n)})
	}
}

// measurement is what the samples counted so far hold; a silence still open at the end
// lasts to it.
func (s *silenceScan) measurement() Measurement {
	s.closeSilence()
	s.quiet = 0
	return speechOf(samplesTime(s.n), s.spans)
}

// samplesTime is how long n samples at PCMRate last.
func samplesTime(n int64) time.Duration {
	return time.Duration(n) * (time.Second / PCMRate)
}

// edgeSnap: a silence within edgeSnap of the start or the end of a file reaches it (the
// quiet fade of a recording's first and last words is no speech worth paying for).
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
