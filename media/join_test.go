package media

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"parla/media/flacbits"
)

func TestOpusSamples(t *testing.T) {
	tests := []struct {
		toc  []byte
		want int64
	}{
		{[]byte{0<<3 | 0}, 480},            // SILK 10 ms, one frame
		{[]byte{3<<3 | 1}, 2 * 2880},       // SILK 60 ms, two frames
		{[]byte{13<<3 | 0}, 960},           // hybrid 20 ms
		{[]byte{16<<3 | 0}, 120},           // CELT 2.5 ms
		{[]byte{31<<3 | 2}, 2 * 960},       // CELT 20 ms, two frames of different sizes
		{[]byte{31<<3 | 3, 0x83}, 3 * 960}, // CELT 20 ms, code 3 with 3 frames (VBR flag set)
	}
	for _, tt := range tests {
		got, err := opusSamples(tt.toc)
		if err != nil || got != tt.want {
			t.Errorf("opusSamples(% x) = %d, %v; want %d", tt.toc, got, err, tt.want)
		}
	}
	for _, bad := range [][]byte{nil, {31<<3 | 3}} {
		if _, err := opusSamples(bad); err == nil {
			t.Errorf("opusSamples(% x) accepted", bad)
		}
	}
}

// encodedParts encodes three tones as parts of format and returns the files.
func encodedParts(t *testing.T, format string) [][]byte {
	t.Helper()
	r := newRunner(t)
	var files [][]byte
	for i, s := range []float64{0.6, 1.1, 0.4} {
		f, _ := Format(format)
		path := filepath.Join(t.TempDir(), "part."+f.Ext)
		args, err := PartArgs(EncodeOptions{Format: format}, fileURL(path))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.FFmpeg(context.Background(), args, bytes.NewReader(tone(t, s, 300+200*i, "wav")), nil); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, data)
	}
	return files
}

// TestJoinRefusesDamagedParts: a flipped byte in a part's audio is caught by the frame or
// page checksum, rather than joined into a file that plays a burst of noise.
func TestJoinRefusesDamagedParts(t *testing.T) {
	join := map[string]func(t *testing.T, files [][]byte) error{
		FLAC: func(t *testing.T, files [][]byte) error {
			var paths []string
			for i, f := range files {
				path := filepath.Join(t.TempDir(), fmt.Sprintf("part-%d.flac", i))
				if err := os.WriteFile(path, f, 0o600); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, path)
			}
			return joinFLAC(&bytes.Buffer{}, paths)
		},
		Opus: func(t *testing.T, files [][]byte) error {
			j := oggJoin{w: &bytes.Buffer{}}
			for i, f := range files {
				if err := j.add(f, i == len(files)-1); err != nil {
					return err
				}
			}
			return nil
		},
	}
	for _, format := range []string{FLAC, Opus} {
		t.Run(format, func(t *testing.T) {
			files := encodedParts(t, format)
			if err := join[format](t, files); err != nil {
				t.Fatalf("intact parts refused: %v", err)
			}
			damaged := slices.Clone(files)
			damaged[1] = slices.Clone(files[1])
			damaged[1][len(damaged[1])*2/3] ^= 0x10
			err := join[format](t, damaged)
			if err == nil || !strings.Contains(err.Error(), "checksum") {
				t.Errorf("got %v, want a checksum error", err)
			}
		})
	}
}

func TestCRC16Replace(t *testing.T) {
	body := tone(t, 0.05, 440, "s16le")
	for _, heads := range [][2][]byte{
		{{0xff, 0xf8, 0x49, 0x08, 0x00}, {0xff, 0xf9, 0x49, 0x08, 0xc2, 0x80}},
		{{1, 2, 3}, {1, 2, 3}},
		{{}, {9}},
	} {
		old := flacbits.CRC16(flacbits.CRC16(0, heads[0]), body)
		want := flacbits.CRC16(flacbits.CRC16(0, heads[1]), body)
		if got := crc16Replace(old, heads[0], heads[1], len(body)); got != want {
			t.Errorf("crc16Replace(% x → % x) = %04x, want %04x", heads[0], heads[1], got, want)
		}
	}
}
