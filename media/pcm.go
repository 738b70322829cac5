package media

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"
)

// PCMRate is the sample rate DecodePCM delivers: what whisper models are trained on.
const PCMRate = 16000

// PCMArgs builds the ffmpeg arguments that decode the first audio of the local file at path
// (any container or codec ffmpeg reads, video included) to mono 32-bit float samples at
// PCMRate on standard output.
func PCMArgs(path string) []string {
	args := append([]string{}, globalArgs...)
	// A local file and nothing it points to: a crafted playlist cannot make ffmpeg open
	// other files, URLs or subprocess-like protocols.
	args = append(args, localInput(path)...)
	return append(args,
		// Audio only: no video decoding, however big the picture.
		"-vn",
		// Mono by averaging the channels, resampled to 16 kHz.
		"-ac", "1",
		"-ar", "16000",
		// Raw little-endian float32 in [-1, 1], the layout whisper takes, no header.
		"-f", "f32le",
		"pipe:1",
	)
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
// PCMRate. expect is the probed duration (0 when unknown); the sample buffer is allocated
// once from it, and ffmpeg's output is converted into it as it arrives, so memory stays
// at about four bytes a sample. A file without audio fails with ErrNoAudio (wrapped).
func (r *Runner) DecodePCM(ctx context.Context, path string, expect time.Duration) ([]float32, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	sink := &pcmSink{samples: make([]float32, 0, pcmCapacity(expect))}
	if err := r.FFmpeg(ctx, PCMArgs(abs), nil, sink); err != nil {
		if strings.Contains(err.Error(), "does not contain any stream") {
			err = fmt.Errorf("%w: %v", ErrNoAudio, err)
		}
		return nil, fmt.Errorf("decoding %s: %w", filepath.Base(path), err)
	}
	if len(sink.samples) == 0 {
		return nil, fmt.Errorf("decoding %s: %w: no samples", filepath.Base(path), ErrNoAudio)
	}
	return sink.samples, nil
}

// pcmSink turns a stream of little-endian float32 bytes into samples. A sample split
// between two writes waits in part until its last bytes come.
type pcmSink struct {
	samples []float32
	part    [4]byte
	nPart   int
}

// Write appends the whole samples in p. It never fails.
func (s *pcmSink) Write(p []byte) (int, error) {
	n := len(p)
	if s.nPart > 0 {
		c := copy(s.part[s.nPart:], p)
		s.nPart += c
		p = p[c:]
		if s.nPart < 4 {
			return n, nil
		}
		s.samples = append(s.samples, math.Float32frombits(binary.LittleEndian.Uint32(s.part[:])))
		s.nPart = 0
	}
	for len(p) >= 4 {
		s.samples = append(s.samples, math.Float32frombits(binary.LittleEndian.Uint32(p)))
		p = p[4:]
	}
	s.nPart = copy(s.part[:], p)
	return n, nil
}
