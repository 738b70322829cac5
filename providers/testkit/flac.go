package testkit

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	"parla/media/flacbits"
)

// flacBlock is the largest block a FLAC frame holds: with a constant subframe, 13 bytes of
// a mono frame decode into this many samples.
const flacBlock = 65535

// LyingFLAC writes a mono 16-bit FLAC at rate Hz that decodes into at least length of
// sound (whole frames of 65,535 samples, each one constant subframe at -12 dBFS, 15 bytes
// a frame) while its STREAMINFO says it lasts claimed (0: "unknown"). Ten hours at 8 kHz
// take 66 KB: the decode bomb of issue 22 with a header that lies (issue 30).
func LyingFLAC(t testing.TB, path string, rate int, length, claimed time.Duration) {
	t.Helper()
	frames := int((length.Seconds()*float64(rate) + flacBlock - 1) / flacBlock)
	total := uint64(claimed.Seconds() * float64(rate))
	out := []byte("fLaC")
	info := make([]byte, 4+34)
	info[0] = 0x80 // the last metadata block, STREAMINFO
	info[3] = 34
	binary.BigEndian.PutUint16(info[4:], flacBlock)
	binary.BigEndian.PutUint16(info[6:], flacBlock)
	// rate (20 bits), channels-1 (3), bits-1 (5), total samples (36): mono, 16 bits.
	binary.BigEndian.PutUint64(info[14:], uint64(rate)<<44|15<<36|total&(1<<36-1))
	out = append(out, info...)
	for n := range frames {
		// Fixed block size, block size as 16 bits at the end, rate from STREAMINFO; mono, 16 bits.
		head := []byte{0xFF, 0xF8, 0x70, 0x08}
		head = append(head, flacbits.CodedNumber(uint64(n))...)
		head = binary.BigEndian.AppendUint16(head, flacBlock-1)
		head = append(head, flacbits.CRC8(head))
		frame := append(head, 0x00, 0x20, 0x00) // a constant subframe of 0x2000
		frame = binary.BigEndian.AppendUint16(frame, flacbits.CRC16(0, frame))
		out = append(out, frame...)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
