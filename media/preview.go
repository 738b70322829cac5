package media

// The free preview (issue 46): the first seconds of a visitor's upload or link, decoded to
// a WAV clip that the engine transcribes before anything is paid. It is a visitor's work:
// its decode runs at the lowest priority, in the visitors' pool the caller holds a place in.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
)

// PreviewClip decodes at most length of the first audio stream of input to mono samples at
// PCMRate and writes them to dst as a 16-bit PCM WAV file. input is a local file path
// (remote false: read as PCMArgs reads it, the file and nothing it points to) or a relay URL
// (remote true: read as RemoteMeasureArgs reads it). The clip is cut by its samples, never
// more than length of them whatever the file's timestamps say (ffmpeg's -t stops the decode
// near there, and the count stops it at the last sample). It runs at the lowest CPU priority,
// as a visitor's decodes do: the caller holds a VisitorSlot and bounds ctx.
//
// The Measurement is the clip's: its Length from the samples written, its speech counted by
// the rule of every measure (HasSpeech false: no speech in these seconds). A file without
// audio fails wrapping ErrNoAudio, one ffmpeg cannot read (or that holds no samples)
// ErrUnreadable. On any error dst is not written.
func (r *Runner) PreviewClip(ctx context.Context, input string, remote bool, length time.Duration, dst string) (Measurement, error) {
	if length < time.Second/PCMRate {
		return Measurement{}, fmt.Errorf("previewing: a clip of %s", length)
	}
	if !remote {
		abs, err := filepath.Abs(input)
		if err != nil {
			return Measurement{}, fmt.Errorf("previewing %s: %w", input, err)
		}
		input = abs
	}
	n := samplesOf(length)
	pcm := &pcmSink{samples: make([]float32, 0, pcmCapacity(length)), limit: int(n)}
	scan := &silenceScan{limit: n}
	err := runIdle(ctx, r.ffmpeg, previewArgs(input, remote, length), nil, io.MultiWriter(pcm, scan))
	// A full clip is all that was asked: ffmpeg's error is then only that the scan stopped
	// reading, or the source failing past what the clip needs.
	if err != nil && !scan.full() {
		if err = noAudioStream(err); errors.Is(err, ErrNoAudio) {
			return Measurement{}, fmt.Errorf("previewing: %w", err)
		}
		return Measurement{}, fmt.Errorf("previewing: %w", measureError(ctx, err))
	}
	if len(pcm.samples) == 0 {
		return Measurement{}, fmt.Errorf("previewing: %w: no audio samples", ErrUnreadable)
	}
	if err := os.WriteFile(dst, wavFile(pcm.samples), 0o600); err != nil {
		os.Remove(dst)
		return Measurement{}, fmt.Errorf("writing the preview clip: %w", err)
	}
	return scan.measurement(), nil
}

// previewArgs are the ffmpeg arguments of PreviewClip: PCMArgs for a local file,
// remotePCMArgs for a relay URL, both stopping at length by the file's clock (-t).
func previewArgs(input string, remote bool, length time.Duration) []string {
	if remote {
		return remotePCMArgs(input, length)
	}
	return PCMArgs(input, length)
}

// wavHeaderSize is the size of the canonical RIFF/WAVE header wavFile writes.
const wavHeaderSize = 44

// wavFile is samples (mono, PCMRate, floats in [-1, 1]) as a 16-bit PCM WAV file: the
// canonical 44-byte header, then the samples, each rounded and clipped to 16 bits.
func wavFile(samples []float32) []byte {
	data := 2 * len(samples)
	b := make([]byte, 0, wavHeaderSize+data)
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(wavHeaderSize-8+data))
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)        // the fmt chunk's size
	b = binary.LittleEndian.AppendUint16(b, 1)         // PCM
	b = binary.LittleEndian.AppendUint16(b, 1)         // mono
	b = binary.LittleEndian.AppendUint32(b, PCMRate)   // samples a second
	b = binary.LittleEndian.AppendUint32(b, 2*PCMRate) // bytes a second
	b = binary.LittleEndian.AppendUint16(b, 2)         // bytes a frame
	b = binary.LittleEndian.AppendUint16(b, 16)        // bits a sample
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(data))
	for _, x := range samples {
		b = binary.LittleEndian.AppendUint16(b, uint16(pcm16(x)))
	}
	return b
}

// pcm16 is a float sample as a 16-bit one: scaled by 32767, rounded, clipped (NaN: 0).
func pcm16(x float32) int16 {
	if x != x { // NaN
		return 0
	}
	v := math.Round(float64(x) * math.MaxInt16)
	return int16(max(min(v, math.MaxInt16), -math.MaxInt16-1))
}
