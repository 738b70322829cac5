package whisper

import (
	"math"
	"slices"
	"time"

	"parla/media"
	"parla/providers"
)

// Voice-activity detection: only the stretches of speech are given to the model, so silence
// is never turned into text (whisper invents "Thank you." or "[BLANK_AUDIO]" over it) and no
// time is spent encoding it. The stretches come either from whisper.cpp's own Silero VAD
// (cgo_whisper.go) or from the silence rule below; either way they are joined with short
// gaps (splice) and the model's times are mapped back to the original clock (clock.original).

// VAD modes (Config.VAD, WHISPER_VAD).
const (
	// VADAuto is VADSilero when the Silero model file (Config.VADModel) is there, else
	// VADSilence.
	VADAuto = "auto"
	// VADSilero runs whisper.cpp's Silero VAD (needs Config.VADModel): it tells speech from
	// noise and music. 83 s of audio take 0.14 s on one thread (0.44 s on a busy machine).
	VADSilero = "silero"
	// VADSilence finds speech by ffmpeg silencedetect's rule on the decoded samples: pure Go,
	// 2 ms for 83 s, but noise or music counts as speech.
	VADSilence = "silence"
	// VADOff gives the model the whole audio.
	VADOff = "off"
)

// VADModes lists the modes, the default first.
var VADModes = []string{VADAuto, VADSilero, VADSilence, VADOff}

// span is a stretch of speech in samples: [start, end).
type span struct{ start, end int }

// silenceRule is ffmpeg silencedetect's definition of silence: every sample quieter than
// noise (an amplitude, 1 = full scale) for at least minSilence samples. Speech is the rest,
// widened by pad samples on each side so no word loses its edges.
type silenceRule struct {
	noise      float32
	minSilence int
	pad        int
}

// defaultSilence: −50 dBFS (well under a quiet voice at −30 dBFS, above dithered digital
// silence), 1 s of it to count as a pause, 0.3 s kept around speech.
var defaultSilence = silenceRule{
	noise:      float32(math.Pow(10, -50.0/20)),
	minSilence: media.PCMRate,
	pad:        media.PCMRate * 3 / 10,
}

// speechSpans applies the rule to samples and returns the stretches of speech in order,
// padded, clipped to the audio and merged where the padding makes them meet.
func (r silenceRule) speechSpans(samples []float32) []span {
	var spans []span
	// A sample at or above the noise level is "loud"; speech runs from a loud sample to the
	// last loud sample before a quiet run of minSilence samples (or the end).
	start, lastLoud := -1, -1
	for i, x := range samples {
		if x >= r.noise || x <= -r.noise {
			if start < 0 {
				start = i
			}
			lastLoud = i
			continue
		}
		if start >= 0 && i-lastLoud >= r.minSilence {
			spans = append(spans, span{start, lastLoud + 1})
			start = -1
		}
	}
	if start >= 0 {
		spans = append(spans, span{start, lastLoud + 1})
	}
	return padSpans(spans, r.pad, len(samples))
}

// padSpans widens each span by pad on both sides within [0, n) and merges the ones that
// then touch or overlap. spans must be in order.
func padSpans(spans []span, pad, n int) []span {
	out := spans[:0:0]
	for _, s := range spans {
		s.start, s.end = max(s.start-pad, 0), min(s.end+pad, n)
		if s.end <= s.start {
			continue
		}
		if k := len(out) - 1; k >= 0 && s.start <= out[k].end {
			out[k].end = max(out[k].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// spliceGap is the silence put between two spans of speech: whisper.cpp's own VAD puts
// 0.1 s; a little more keeps the model from running two sentences into one segment.
const spliceGap = media.PCMRate / 5

// clock maps a time in the spliced samples back to the original audio. pieces[i] starts at
// at[i] in the spliced samples; gaps of spliceGap separate them.
type clock struct {
	pieces []span
	at     []int
}

// splice returns the samples of spans joined with spliceGap of silence between them, and the
// clock that maps the result's times back. With one span covering everything it returns
// samples itself.
func splice(samples []float32, spans []span) ([]float32, clock) {
	if len(spans) == 1 && spans[0] == (span{0, len(samples)}) {
		return samples, clock{}
	}
	total := 0
	for _, s := range spans {
		total += s.end - s.start
	}
	total += max(len(spans)-1, 0) * spliceGap
	out := make([]float32, 0, total)
	c := clock{pieces: spans, at: make([]int, len(spans))}
	for i, s := range spans {
		if i > 0 {
			out = append(out, make([]float32, spliceGap)...)
		}
		c.at[i] = len(out)
		out = append(out, samples[s.start:s.end]...)
	}
	return out, c
}

// original maps t in the spliced audio to the original audio. A time inside a gap belongs to
// the speech before it when it ends something (end) and to the speech after it otherwise,
// so nothing is stretched over the silence that was cut.
func (c clock) original(t time.Duration, end bool) time.Duration {
	if len(c.pieces) == 0 {
		return t
	}
	p := int(t * media.PCMRate / time.Second)
	// the last piece starting at or before p
	i, found := slices.BinarySearch(c.at, p)
	if !found {
		i--
	}
	if i < 0 {
		return samplesToTime(c.pieces[0].start)
	}
	s := c.pieces[i]
	if in := p - c.at[i]; in <= s.end-s.start {
		return samplesToTime(s.start + in)
	}
	if end || i+1 == len(c.pieces) {
		return samplesToTime(s.end)
	}
	return samplesToTime(c.pieces[i+1].start)
}

// remap puts segments (and their words) from the spliced clock back on the original one.
func (c clock) remap(segments []providers.Segment) {
	if len(c.pieces) == 0 {
		return
	}
	for i := range segments {
		s := &segments[i]
		s.Start, s.End = c.original(s.Start, false), c.original(s.End, true)
		s.End = max(s.End, s.Start)
		for j := range s.Words {
			w := &s.Words[j]
			w.Start, w.End = c.original(w.Start, false), c.original(w.End, true)
			w.End = max(w.End, w.Start)
		}
	}
}

func samplesToTime(n int) time.Duration {
	return time.Duration(n) * time.Second / media.PCMRate
}
