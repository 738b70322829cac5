package flacbits

import (
	"bytes"
	"testing"
)

func TestCodedNumber(t *testing.T) {
	tests := []struct {
		n    uint64
		want []byte
	}{
		{0, []byte{0x00}},
		{0x7f, []byte{0x7f}},
		{0x80, []byte{0xc2, 0x80}},
		{0x7ff, []byte{0xdf, 0xbf}},
		{0x800, []byte{0xe0, 0xa0, 0x80}},
		{0xffff, []byte{0xef, 0xbf, 0xbf}},
		{0x10000, []byte{0xf0, 0x90, 0x80, 0x80}},
		{77_414_400, []byte{0xfc, 0x84, 0xa7, 0x94, 0x80, 0x80}}, // 58.5 minutes of 22,050 Hz samples
		{1<<36 - 1, []byte{0xfe, 0xbf, 0xbf, 0xbf, 0xbf, 0xbf, 0xbf}},
	}
	for _, tt := range tests {
		got := CodedNumber(tt.n)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("CodedNumber(%d) = % x, want % x", tt.n, got, tt.want)
		}
		// What Go's UTF-8 encoder makes of the same number, where it is a code point.
		if tt.n < 0x10000 && (tt.n < 0xd800 || tt.n > 0xdfff) && !bytes.Equal(got, []byte(string(rune(tt.n)))) {
			t.Errorf("CodedNumber(%d) differs from UTF-8", tt.n)
		}
	}
}

// TestCRCs: the catalogue's check values ("123456789") of CRC-8/SMBUS and CRC-16/UMTS,
// the parameters FLAC's header and frame checksums use.
func TestCRCs(t *testing.T) {
	if got := CRC8([]byte("123456789")); got != 0xf4 {
		t.Errorf("CRC8 check value = %#x, want 0xf4", got)
	}
	if got := CRC16(0, []byte("123456789")); got != 0xfee8 {
		t.Errorf("CRC16 check value = %#x, want 0xfee8", got)
	}
	// Continuing over a split input is the same as over the whole.
	if CRC16(CRC16(0, []byte("1234")), []byte("56789")) != 0xfee8 {
		t.Error("CRC16 does not continue across a split")
	}
}
