package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrNotWAV is returned (wrapped) by ReadWAVHeader for a stream that is not PCM RIFF/WAVE.
var ErrNotWAV = errors.New("not a PCM WAV stream")

// WAVFormat is the sample layout announced by a WAV header.
type WAVFormat struct {
	SampleRate    int
	Channels      int
	BitsPerSample int
}

// ReadWAVHeader consumes a RIFF/WAVE header from r up to the start of the sample data, so
// that what remains in r is raw PCM. Streaming writers (espeak-ng --stdout) put a bogus
// size in the data chunk; it is ignored and the samples run to the end of r.
func ReadWAVHeader(r io.Reader) (WAVFormat, error) {
	var riff [12]byte
	if _, err := io.ReadFull(r, riff[:]); err != nil {
		return WAVFormat{}, fmt.Errorf("reading RIFF header: %w", err)
	}
	if string(riff[0:4]) != "RIFF" || string(riff[8:12]) != "WAVE" {
		return WAVFormat{}, ErrNotWAV
	}
	var f WAVFormat
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return WAVFormat{}, fmt.Errorf("reading WAV chunk header: %w", err)
		}
		id, size := string(hdr[0:4]), binary.LittleEndian.Uint32(hdr[4:8])
		switch id {
		case "data":
			if f.SampleRate == 0 {
				return WAVFormat{}, fmt.Errorf("%w: data before fmt chunk", ErrNotWAV)
			}
			return f, nil
		case "fmt ":
			if size < 16 || size > 1<<16 {
				return WAVFormat{}, fmt.Errorf("%w: fmt chunk of %d bytes", ErrNotWAV, size)
			}
			body := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, body); err != nil {
				return WAVFormat{}, fmt.Errorf("reading WAV fmt chunk: %w", err)
			}
			if tag := binary.LittleEndian.Uint16(body[0:2]); tag != 1 && tag != 0xFFFE {
				return WAVFormat{}, fmt.Errorf("%w: format tag %#x", ErrNotWAV, tag)
			}
			f.Channels = int(binary.LittleEndian.Uint16(body[2:4]))
			f.SampleRate = int(binary.LittleEndian.Uint32(body[4:8]))
			f.BitsPerSample = int(binary.LittleEndian.Uint16(body[14:16]))
		default:
			// LIST and other chunks: skip, keeping the word alignment RIFF requires.
			if _, err := io.CopyN(io.Discard, r, int64(size)+int64(size%2)); err != nil {
				return WAVFormat{}, fmt.Errorf("skipping WAV %q chunk: %w", id, err)
			}
		}
	}
}
