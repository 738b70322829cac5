package media

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"parla/providers/testkit"
)

// mixedSegment is one part of a stream whose parameters change mid-stream.
type mixedSegment struct {
	rate, channels int
	length         time.Duration
}

// mixedStream writes AAC segments, each encoded alone to MPEG-TS, joined byte for byte: at
// every seam the sample rate or channel count may change and the timestamps start again
// at 0, so the container claims about the longest segment while a decoder hears them all
// (issue 22, item 1). It returns the file and the segments' total length.
func mixedStream(t testing.TB, dir string, segs []mixedSegment) (string, time.Duration) {
	t.Helper()
	ffmpeg := testkit.Binary(t, "ffmpeg")
	var joined []byte
	var total time.Duration
	for i, s := range segs {
		p := filepath.Join(dir, fmt.Sprintf("seg%d.ts", i))
		// A tone at -12 dBFS: sound all along, so none of it is silence.
		testkit.Run(t, ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
			"-i", fmt.Sprintf("sine=frequency=%d:sample_rate=%d:duration=%s", 300+100*i, s.rate, seconds(s.length)),
			"-af", "volume=0.5", "-ac", strconv.Itoa(s.channels), "-c:a", "aac", "-b:a", "32k", "-f", "mpegts", "file:"+p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		joined = append(joined, data...)
		total += s.length
	}
	path := filepath.Join(dir, "mixed.ts")
	if err := os.WriteFile(path, joined, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, total
}

// alternating is the example: 16 kHz mono and 22.05 kHz stereo, in turn.
func alternating(n int, length time.Duration) []mixedSegment {
	segs := make([]mixedSegment, n)
	for i := range segs {
		segs[i] = mixedSegment{16000, 1, length}
		if i%2 == 1 {
			segs[i] = mixedSegment{22050, 2, length}
		}
	}
	return segs
}

// enginePCM is how long the audio the whisper engine decodes from path lasts.
func enginePCM(t *testing.T, r *Runner, path string, paid time.Duration) time.Duration {
	t.Helper()
	samples, err := r.DecodePCM(context.Background(), path, paid, EngineLimit(paid))
	if err != nil {
		t.Fatalf("DecodePCM: %v", err)
	}
	return time.Duration(len(samples)) * time.Second / PCMRate
}

// TestMeasurePricesWhatTheEngineHears: a file whose parameters change mid-stream is either
// refused or measured at no less than what the engine decodes from it. The measure used
// to report the longest segment alone (asetpts restarts with every rebuilt filter graph).
func TestMeasurePricesWhatTheEngineHears(t *testing.T) {
	r := newRunner(t)
	path, total := mixedStream(t, t.TempDir(), alternating(4, 3*time.Second))
	heard := enginePCM(t, r, path, 0)
	if heard < total-time.Second {
		t.Fatalf("the engine decodes %v of %v: the test file is not what it should be", heard, total)
	}
	m, err := r.CheckSpeech(context.Background(), path)
	if err == nil && m.Length < heard-100*time.Millisecond {
		t.Fatalf("measured %v; the engine decodes %v", m.Length, heard)
	}
	t.Logf("measure: %v, %v; the engine decodes %v", m.Length, err, heard)
}

// TestEngineInputCappedAtPaidLength: whatever the measure said, the engine is given no
// more than the paid length and a small margin.
func TestEngineInputCappedAtPaidLength(t *testing.T) {
	r := newRunner(t)
	path, _ := mixedStream(t, t.TempDir(), alternating(4, 3*time.Second))
	paid := 3 * time.Second
	if heard := enginePCM(t, r, path, paid); heard > paid+3*time.Second {
		t.Fatalf("paid %v, the engine decodes %v", paid, heard)
	}
}

// bombBlock is the largest block a FLAC frame holds: with a constant subframe, 13 bytes
// of a mono frame decode into this many samples.
const bombBlock = 65535

// writeFLACBomb writes the decode bomb of issue 22, item 2: a mono 16-bit FLAC at rate Hz
// of frames frames of bombBlock samples, each one constant subframe at -12 dBFS (sound, as
// far as the speech measure can tell). STREAMINFO leaves the total 0, "unknown", so no
// header gives the length away.
func writeFLACBomb(t testing.TB, path string, rate, frames int) {
	t.Helper()
	out := []byte("fLaC")
	info := make([]byte, 4+34)
	info[0] = 0x80 // the last metadata block, STREAMINFO
	info[3] = 34
	binary.BigEndian.PutUint16(info[4:], bombBlock)
	binary.BigEndian.PutUint16(info[6:], bombBlock)
	// rate (20 bits), channels-1 (3), bits-1 (5), total samples (36): mono, 16 bits.
	binary.BigEndian.PutUint64(info[14:], uint64(rate)<<44|15<<36)
	out = append(out, info...)
	for n := range frames {
		// Fixed block size, block size as 16 bits at the end, rate from STREAMINFO; mono, 16 bits.
		head := []byte{0xFF, 0xF8, 0x70, 0x08}
		head = append(head, codedNumber(uint64(n))...)
		head = binary.BigEndian.AppendUint16(head, bombBlock-1)
		head = append(head, crc8(head))
		frame := append(head, 0x00, 0x20, 0x00) // a constant subframe of 0x2000
		frame = binary.BigEndian.AppendUint16(frame, crc16(0, frame))
		out = append(out, frame...)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUploadBombRefusedFast: the 27,914-byte FLAC that decodes into 4.6 hours is
// refused within 10 s, and so is one of 600 KB that lasts 91 hours. (Measured with
// CheckSpeech before issue 22: accepted as 4h53m in 1.5 s and as 104h40m in 19.3 s.)
func TestUploadBombRefusedFast(t *testing.T) {
	r := newRunner(t)
	for _, frames := range []int{2147, 46000} {
		path := filepath.Join(t.TempDir(), "bomb.flac")
		writeFLACBomb(t, path, 8000, frames)
		st, _ := os.Stat(path)
		start := time.Now()
		m, err := r.CheckUpload(context.Background(), path, 3*time.Hour)
		took := time.Since(start)
		// The small one holds more than its size allows; the big one more than 3 hours.
		if !errors.Is(err, ErrTooDense) && !errors.Is(err, ErrTooLong) || took > 10*time.Second {
			t.Errorf("%d bytes: measured %v, %v in %v; want refused within 10 s", st.Size(), m.Length, err, took)
		}
		t.Logf("%d bytes: %v in %v", st.Size(), err, took)
	}
}

// TestCheckUploadLongest: an upload longer than the longest taken is refused, whether its
// header says so (without decoding) or only its samples do (decoding stops just past it);
// one within it is measured as CheckSpeech measures it.
func TestCheckUploadLongest(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	ctx := context.Background()
	long := filepath.Join(dir, "long.wav")
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "sine=frequency=400:sample_rate=16000:duration=20", "file:"+long)
	if _, err := r.CheckUpload(ctx, long, 10*time.Second); !errors.Is(err, ErrTooLong) {
		t.Errorf("20 s with the header saying so, 10 s taken: %v", err)
	}
	headless, _ := mixedStream(t, dir, alternating(1, 20*time.Second)) // MPEG-TS: no length up front
	if _, err := r.CheckUpload(ctx, headless, 10*time.Second); !errors.Is(err, ErrTooLong) {
		t.Errorf("20 s of MPEG-TS, 10 s taken: %v", err)
	}
	m, err := r.CheckUpload(ctx, long, time.Minute)
	want, _ := r.CheckSpeech(ctx, long)
	if err != nil || m.Length != want.Length || m.Speech != want.Speech {
		t.Errorf("20 s, a minute taken: %+v, %v; CheckSpeech says %+v", m, err, want)
	}
}

// TestCheckUploadOwnPool: a visitor's measure never waits for the shared ffmpeg slots
// (paid work and previews), and paid work never waits for the visitors'.
func TestCheckUploadOwnPool(t *testing.T) {
	testkit.Binary(t, "ffmpeg")
	r := New(Config{MaxConcurrent: 1, MaxVisitors: 1})
	path := filepath.Join(t.TempDir(), "a.wav")
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "sine=frequency=400:sample_rate=16000:duration=2", "file:"+path)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r.sem <- struct{}{} // every shared slot busy
	if _, err := r.CheckUpload(ctx, path, time.Hour); err != nil {
		t.Fatalf("CheckUpload with the shared slots busy: %v", err)
	}
	<-r.sem
	r.visitors <- struct{}{} // every visitors' slot busy
	if _, err := r.CheckSpeech(ctx, path); err != nil {
		t.Fatalf("CheckSpeech with the visitors' slots busy: %v", err)
	}
}

func TestUploadLimit(t *testing.T) {
	for _, c := range []struct {
		size    int64
		longest time.Duration
		want    time.Duration
		err     error
	}{
		{27914, 3 * time.Hour, 27914 * time.Second / 16, ErrTooDense}, // the bomb: 29 min at most
		{25 << 20, 3 * time.Hour, 3 * time.Hour, ErrTooLong},
		{25 << 20, 0, (25 << 20) * time.Second / 16, ErrTooDense},
		{160, time.Hour, 10 * time.Second, ErrTooDense},
	} {
		got, err := uploadLimit(c.size, c.longest)
		if got != c.want || err != c.err {
			t.Errorf("uploadLimit(%d, %v) = %v, %v; want %v, %v", c.size, c.longest, got, err, c.want, c.err)
		}
	}
	if d := MeasureDeadline(27914); d != 10*time.Second {
		t.Errorf("MeasureDeadline of the bomb: %v", d)
	}
	if d := MeasureDeadline(25 << 20); d != 110*time.Second {
		t.Errorf("MeasureDeadline of 25 MiB: %v", d)
	}
}
