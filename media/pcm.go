package media

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// PCMRate is the sample rate DecodePCM delivers: what whisper models are trained on.
const PCMRate = 16000

// PCMArgs builds the ffmpeg arguments that decode the first audio stream of the local
// file at path (any container or codec ffmpeg reads, video included) to mono 32-bit float
// samples at PCMRate on standard output, at most limit of them (0: all). The whisper
// engine transcribes these samples and the measure counts them (Runner.Measure), so what
// is priced is what is heard.
func PCMArgs(path string, limit time.Duration) []string {
	args := append([]string{}, globalArgs...)
	// A local file and nothing it points to: a crafted playlist cannot make ffmpeg open
	// other files, URLs or subprocess-like protocols.
	args = append(args, localInput(path)...)
	return append(args, pcmOutput(limit)...)
}

// pcmOutput is the output half of PCMArgs, for a local file or a relayed link.
func pcmOutput(limit time.Duration) []string {
	// The first audio stream only, the one ReencodeArgs takes too: no video decoding,
	// however big the picture, and no second soundtrack.
	out := []string{"-map", "0:a:0"}
	if limit > 0 {
		// An engine's cap (EngineLimit): ffmpeg stops decoding here, and the reader
		// (pcmSink) at as many samples, since -t goes by timestamps, which a file can
		// bend. No measure passes a limit here: a price counts every sample.
		out = append(out, "-t", seconds(limit))
	}
	return append(out,
		// Mono by averaging the channels, resampled to 16 kHz.
		"-ac", "1",
		"-ar", strconv.Itoa(PCMRate),
		// Raw little-endian float32 in [-1, 1], the layout whisper takes, no header.
		"-f", "f32le",
		"pipe:1",
	)
}

// EngineLimit is the most audio an engine is given for an order priced at paid: the paid
// length and a small margin (2 s and 1 %, for encoders' padding and rounding), so that no
// error of the measure can be sold. 0 (unknown) is no limit.
func EngineLimit(paid time.Duration) time.Duration {
	if paid <= 0 {
		return 0
	}
	return paid + paid/100 + 2*time.Second
}

// pcmCapacity is the expected sample count plus a margin, so a probed duration that is a little
// short does not make the buffer grow (and copy) at the very end: 1% plus one second.
func pcmCapacity(expect time.Duration) int {
	if expect <= 0 {
		// Unknown length: start with a minute and let append grow it.
		expect = time.Minute
	}
	n := int(expect.Seconds() * PCMRate)
	return n + n/100 + PCMRate
}

// DecodePCM decodes the audio of the local file at path to mono float32 samples at
// PCMRate, no more than limit of them (0: all; an engine passes EngineLimit of the paid
// length). expect is the probed duration (0 when unknown); the sample buffer is allocated
// once from it, and ffmpeg's output is converted into it as it arrives, so memory stays
// at about four bytes a sample. A file without audio fails with ErrNoAudio (wrapped).
func (r *Runner) DecodePCM(ctx context.Context, path string, expect, limit time.Duration) ([]float32, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	sink := &pcmSink{samples: make([]float32, 0, pcmCapacity(expect)), limit: int(limit / (time.Second / PCMRate))}
	if err := r.FFmpeg(ctx, PCMArgs(abs, limit), nil, sink); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", filepath.Base(path), noAudioStream(err))
	}
	if len(sink.samples) == 0 {
		return nil, fmt.Errorf("decoding %s: %w: no samples", filepath.Base(path), ErrNoAudio)
	}
	return sink.samples, nil
}

// noAudioStream marks ffmpeg's failure on a file without audio as ErrNoAudio (wrapped);
// any other error is returned as it is.
func noAudioStream(err error) error {
	// The second: -map 0:a:0 on a file with streams, none of them audio.
	if msg := err.Error(); strings.Contains(msg, "does not contain any stream") || strings.Contains(msg, "matches no streams") {
		return fmt.Errorf("%w: %v", ErrNoAudio, err)
	}
	return err
}

// pcmSink turns a stream of little-endian float32 bytes into samples, keeping at most
// limit of them (0: all) and dropping the rest.
type pcmSink struct {
	samples []float32
	limit   int
	split   f32Split
}

// Write appends the whole samples in p. It never fails.
func (s *pcmSink) Write(p []byte) (int, error) {
	s.split.each(p, func(x float32) {
		if s.limit <= 0 || len(s.samples) < s.limit {
			s.samples = append(s.samples, x)
		}
	})
	return len(p), nil
}

// f32Split reads little-endian float32 samples from writes that may cut one in two: the
// first bytes of a sample wait here until its last come.
type f32Split struct {
	part  [4]byte
	nPart int
}

// each calls fn on every whole sample that p completes or holds, in order.
func (s *f32Split) each(p []byte, fn func(float32)) {
	if s.nPart > 0 {
		c := copy(s.part[s.nPart:], p)
		s.nPart += c
		p = p[c:]
		if s.nPart < 4 {
			return
		}
		fn(math.Float32frombits(binary.LittleEndian.Uint32(s.part[:])))
		s.nPart = 0
	}
	for len(p) >= 4 {
		fn(math.Float32frombits(binary.LittleEndian.Uint32(p)))
		p = p[4:]
	}
	s.nPart = copy(s.part[:], p)
}

// LoudPCMArgs decode a local file to raw mono 16-bit PCM at rate on stdout, matched in
// loudness: EBU R128's loudnorm, one pass, to -18 LUFS. The speech router joins the parts of
// different engines so (espeak-ng speaks much louder than the neural voices).
func LoudPCMArgs(path string, rate int) []string {
	return []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-i", "file:" + path,
		"-af", "loudnorm=I=-18:TP=-2:LRA=11", "-ac", "1", "-ar", strconv.Itoa(rate), "-f", "s16le", "pipe:1"}
}
