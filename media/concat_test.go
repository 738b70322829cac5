package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"parla/providers/testkit"
)

func TestPartArgs(t *testing.T) {
	tail := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}
	in := []string{"-f", "wav", "-protocol_whitelist", "pipe", "-i", "pipe:0"}
	tests := []struct {
		opts EncodeOptions
		want []string
	}{
		{EncodeOptions{Format: MP3}, []string{"-f", "mp3", "-b:a", "128k", "-c:a", "libmp3lame", "-compression_level", "5",
			"-id3v2_version", "0", "-map_metadata", "-1", "-protocol_whitelist", "file", "-write_xing", "0", "file:/t/p.mp3"}},
		{EncodeOptions{Format: Opus, Tempo: 2}, []string{"-f", "ogg", "-b:a", "48k", "-af", "atempo=2", "-ar", "24000",
			"-c:a", "libopus", "-compression_level", "5", "-map_metadata", "-1", "-protocol_whitelist", "file", "file:/t/p.opus"}},
		{EncodeOptions{Format: AAC}, []string{"-f", "adts", "-b:a", "64k", "-aac_coder", "fast", "-c:a", "aac",
			"-map_metadata", "-1", "-protocol_whitelist", "file", "file:/t/p.m4a"}},
		{EncodeOptions{Format: FLAC}, []string{"-f", "flac", "-c:a", "flac",
			"-map_metadata", "-1", "-protocol_whitelist", "file", "file:/t/p.flac"}},
	}
	for _, tt := range tests {
		t.Run(tt.opts.Format, func(t *testing.T) {
			f, _ := Format(tt.opts.Format)
			got, err := PartArgs(tt.opts, "file:/t/p."+f.Ext)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Concat(in, tt.want, tail)
			if !slices.Equal(got, want) {
				t.Errorf("args\n got %q\nwant %q", got, want)
			}
		})
	}
	for _, bad := range []struct{ format, output string }{{"wav", "file:/t/p.wav"}, {Opus, "pipe:1"}, {MP3, "/t/p.mp3"}} {
		if args, err := PartArgs(EncodeOptions{Format: bad.format}, bad.output); err == nil {
			t.Errorf("PartArgs(%q, %q) accepted: %q", bad.format, bad.output, args)
		}
	}
}

// testParts serves WAV data as parts, like a producer process would.
type testParts struct {
	data [][]byte
	// failClose makes part i's producer report the error when closed, after all its
	// output (a process that wrote some audio, then died).
	failClose map[int]error

	mu             sync.Mutex
	opened, closed []int
}

func (p *testParts) parts(workers int) Parts {
	return Parts{Count: len(p.data), Workers: workers, Open: p.open}
}

func (p *testParts) open(ctx context.Context, i int) (io.ReadCloser, error) {
	p.mu.Lock()
	p.opened = append(p.opened, i)
	p.mu.Unlock()
	return &trackedPart{Reader: bytes.NewReader(p.data[i]), close: func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.closed = append(p.closed, i)
		return p.failClose[i]
	}}, nil
}

// checkClosed fails the test unless every part opened was closed, once.
func (p *testParts) checkClosed(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Equal(slices.Sorted(slices.Values(p.opened)), slices.Sorted(slices.Values(p.closed))) {
		t.Errorf("opened %v, closed %v", p.opened, p.closed)
	}
}

type trackedPart struct {
	io.Reader
	close func() error
}

func (p *trackedPart) Close() error { return p.close() }

// tone makes seconds of a tone at freq Hz, 22,050 Hz mono, as WAV or raw PCM.
func tone(t *testing.T, seconds float64, freq int, container string) []byte {
	t.Helper()
	ffmpeg := testkit.Binary(t, "ffmpeg")
	cmd := exec.Command(ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", fmt.Sprintf("sine=frequency=%d:sample_rate=22050:duration=%s", freq, strconv.FormatFloat(seconds, 'f', -1, 64)),
		"-ac", "1", "-c:a", "pcm_s16le", "-f", container, "pipe:1")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("making a test tone: %v: %s", err, stderr.String())
	}
	return out.Bytes()
}

// decode decodes a file to 22,050 Hz mono s16le with ffmpeg and fails the test if ffmpeg
// reports any error on the way (a damaged frame, timestamps running backwards).
func decode(t *testing.T, path string) []byte {
	t.Helper()
	ffmpeg := testkit.Binary(t, "ffmpeg")
	cmd := exec.Command(ffmpeg, "-nostdin", "-hide_banner", "-v", "error", "-i", path,
		"-ac", "1", "-ar", "22050", "-f", "s16le", "pipe:1")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("decoding %s: %v: %s", filepath.Base(path), err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("decoding %s reported errors: %.500s", filepath.Base(path), stderr.String())
	}
	return out.Bytes()
}

// seamSlack is how much longer than the parts together a lossy join may be, per part:
// encoder delay and the padding of the last frame (mp3 at 22 kHz about 50–75 ms, aac
// about 70 ms, opus under 30 ms).
var seamSlack = map[string]time.Duration{MP3: 80 * time.Millisecond, AAC: 95 * time.Millisecond, Opus: 30 * time.Millisecond, FLAC: 0}

func TestEncodeParts(t *testing.T) {
	r := newRunner(t)
	seconds := []float64{1.3, 2.1, 0.7, 3.05, 1.9}
	var wavs [][]byte
	var pcm []byte
	for i, s := range seconds {
		wavs = append(wavs, tone(t, s, 300+100*i, "wav"))
		pcm = append(pcm, tone(t, s, 300+100*i, "s16le")...)
		if i == 2 { // a part without a sample: a chunk of text that is only punctuation
			wavs = append(wavs, wavOf(nil, 22050, 1))
		}
	}
	want := time.Duration(len(pcm)/2) * time.Second / 22050
	for _, format := range []string{MP3, Opus, AAC, FLAC} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			p := &testParts{data: wavs}
			var out bytes.Buffer
			var progress progressLog
			if err := r.EncodeParts(context.Background(), p.parts(2), EncodeOptions{Format: format}, progress.report, &out); err != nil {
				t.Fatal(err)
			}
			p.checkClosed(t)
			f, _ := Format(format)
			path := filepath.Join(t.TempDir(), "joined."+f.Ext)
			if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			info, err := r.Probe(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Codec != f.Codec {
				t.Errorf("codec %q, want %q", info.Codec, f.Codec)
			}
			slack := time.Duration(len(wavs)) * seamSlack[format]
			if info.Duration < want-time.Millisecond || info.Duration > want+slack+time.Millisecond {
				t.Errorf("ffprobe says %v, want %v (the sum of the parts) plus at most %v", info.Duration, want, slack)
			}
			decoded := decode(t, path)
			got := time.Duration(len(decoded)/2) * time.Second / 22050
			if got < want-time.Millisecond || got > want+slack+time.Millisecond {
				t.Errorf("decodes to %v, want %v plus at most %v", got, want, slack)
			}
			if format == FLAC && !bytes.Equal(decoded, pcm) {
				t.Errorf("FLAC decodes to other samples than the parts' (first difference at byte %d)", firstDiff(decoded, pcm))
			}
			checkOneHeader(t, format, out.Bytes())
			checkProgress(t, progress.seen, len(wavs))
		})
	}
}

// checkOneHeader fails the test when a joined file carries a part's header in its middle.
func checkOneHeader(t *testing.T, format string, data []byte) {
	t.Helper()
	count := func(s string) int { return bytes.Count(data, []byte(s)) }
	switch format {
	case MP3:
		// Bare frames from the first byte to the last, none of them a Xing/Info frame.
		frames, err := mp3Frames(data)
		if err != nil {
			t.Error(err)
		}
		for i, f := range frames {
			if bytes.Contains(f[:min(len(f), 40)], []byte("Xing")) || bytes.Contains(f[:min(len(f), 40)], []byte("Info")) {
				t.Errorf("frame %d is a Xing/Info frame", i)
			}
		}
	case Opus:
		if _, err := oggPages(data); err != nil { // framing and every page's CRC
			t.Error(err)
		}
		if n := count("OpusHead"); n != 1 {
			t.Errorf("%d OpusHead packets, want 1", n)
		}
		checkOggPages(t, data)
	case AAC:
		if n := count("ftyp") + count("moov"); n != 2 {
			t.Errorf("%d ftyp/moov boxes, want one each", n)
		}
	case FLAC:
		// One STREAMINFO, then frames whose checksums hold, numbered by sample.
		_, at, err := parseFLACHeader(data)
		if err != nil || at != 4+4+34 {
			t.Fatalf("FLAC header: %v, frames from byte %d", err, at)
		}
		frames, err := flacFrames(data, at)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range frames {
			if data[f.start+1]&1 != 1 {
				t.Fatalf("frame %d is not numbered by sample", i)
			}
		}
	}
}

// mp3Frames cuts MPEG-1/2 layer III data into its frames, failing on anything else (an ID3
// tag, a torn frame).
func mp3Frames(data []byte) ([][]byte, error) {
	bitrates := map[bool][]int{ // kb/s by index, MPEG-1 and MPEG-2
		true:  {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
		false: {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
	}
	rates := map[bool][]int{true: {44100, 48000, 32000}, false: {22050, 24000, 16000}}
	var frames [][]byte
	for at := 0; at < len(data); {
		h := data[at:]
		if len(h) < 4 || h[0] != 0xff || h[1]&0xe6 != 0xe2 || h[2]>>4 == 0 || h[2]>>4 == 15 || (h[2]>>2)&3 == 3 {
			return nil, fmt.Errorf("no layer III frame at byte %d", at)
		}
		mpeg1 := h[1]&0x18 == 0x18
		bitrate := bitrates[mpeg1][h[2]>>4] * 1000
		rate := rates[mpeg1][(h[2]>>2)&3]
		size := 144 * bitrate / rate
		if !mpeg1 {
			size /= 2
		}
		size += int(h[2]>>1) & 1 // padding
		if at+size > len(data) {
			return nil, fmt.Errorf("frame at byte %d cut short", at)
		}
		frames = append(frames, data[at:at+size])
		at += size
	}
	return frames, nil
}

// checkOggPages walks the Ogg pages: one logical stream (one serial number), page sequence
// numbers without gaps, granule positions that never go back, one end-of-stream page last.
func checkOggPages(t *testing.T, data []byte) {
	t.Helper()
	var serial, seq uint32
	var granule int64
	pages := 0
	for at := 0; at < len(data); {
		if !bytes.HasPrefix(data[at:], []byte("OggS")) || at+27 > len(data) {
			t.Fatalf("no Ogg page at byte %d", at)
		}
		flags := data[at+5]
		g := int64(binary.LittleEndian.Uint64(data[at+6:]))
		s := binary.LittleEndian.Uint32(data[at+14:])
		n := binary.LittleEndian.Uint32(data[at+18:])
		segments := int(data[at+26])
		size := 27 + segments
		for _, l := range data[at+27 : at+27+segments] {
			size += int(l)
		}
		if pages == 0 {
			serial = s
		} else if s != serial || n != seq+1 {
			t.Fatalf("page %d: serial %x sequence %d after serial %x sequence %d", pages, s, n, serial, seq)
		}
		if g != -1 && g < granule {
			t.Fatalf("page %d: granule %d after %d", pages, g, granule)
		}
		if g != -1 {
			granule = g
		}
		last := at+size >= len(data)
		if (flags&4 != 0) != last {
			t.Errorf("page %d of the stream has end-of-stream flag %v", pages, flags&4 != 0)
		}
		seq = n
		pages++
		at += size
	}
}

// checkProgress: starts at 0, never goes back, ends at 100, and moves with every part.
func checkProgress(t *testing.T, seen []int, parts int) {
	t.Helper()
	if len(seen) < parts+2 || seen[0] != 0 || seen[len(seen)-1] != 100 {
		t.Errorf("progress %v, want 0, a step per part, 100", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Errorf("progress went back: %v", seen)
		}
	}
}

func TestEncodePartsSingle(t *testing.T) {
	r := newRunner(t)
	p := &testParts{data: [][]byte{tone(t, 1.5, 440, "wav")}}
	var out bytes.Buffer
	var progress progressLog
	if err := r.EncodeParts(context.Background(), p.parts(4), EncodeOptions{Format: FLAC}, progress.report, &out); err != nil {
		t.Fatal(err)
	}
	p.checkClosed(t)
	if info := probeBytes(t, r, out.Bytes(), "flac"); info.Duration != 1500*time.Millisecond {
		t.Errorf("duration %v, want 1.5 s", info.Duration)
	}
	if !slices.Equal(progress.seen, []int{0, 100}) {
		t.Errorf("progress %v", progress.seen)
	}
}

// slowParts produces each part with a real process that writes a WAV tone in real time
// (ffmpeg -re), so parts are still being made and encoded when the test intervenes. Part
// fail, when >= 0, ends with an error after 200 ms of output; the others would run 30 s.
type slowParts struct {
	t    *testing.T
	fail int

	mu      sync.Mutex
	started int
	// cut counts the 30 s parts whose producer was closed while still running (killed by
	// Close or by the context, not ended by itself): what proves that a stop stopped them.
	cut int
}

// checkCut fails the test unless every 30 s part that started was cut short.
func (p *slowParts) checkCut(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	long := p.started
	if p.fail >= 0 && p.fail < p.started {
		long--
	}
	if p.cut != long {
		t.Errorf("%d of the %d running 30 s parts cut short, want all", p.cut, long)
	}
}

func (p *slowParts) open(ctx context.Context, i int) (io.ReadCloser, error) {
	p.mu.Lock()
	p.started++
	p.mu.Unlock()
	ffmpeg := testkit.Binary(p.t, "ffmpeg")
	duration := "30"
	if i == p.fail {
		duration = "0.2"
	}
	cmd := exec.CommandContext(ctx, ffmpeg, "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi",
		"-i", "sine=sample_rate=22050:duration="+duration, "-ac", "1", "-c:a", "pcm_s16le", "-f", "wav", "pipe:1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &procPart{ReadCloser: out, cmd: cmd, fail: i == p.fail, parts: p}, nil
}

type procPart struct {
	io.ReadCloser
	cmd   *exec.Cmd
	fail  bool
	parts *slowParts
}

func (p *procPart) Close() error {
	p.ReadCloser.Close()
	p.cmd.Process.Kill()
	p.cmd.Wait()
	if p.fail {
		return errors.New("producer died")
	}
	// A producer that had written its 30 s ended with status 0 before the kill.
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		p.parts.mu.Lock()
		p.parts.cut++
		p.parts.mu.Unlock()
	}
	return nil
}

func TestEncodePartsCancel(t *testing.T) {
	r := newRunner(t)
	for _, format := range []string{MP3, FLAC} {
		t.Run(format, func(t *testing.T) {
			testkit.NoChildren(t)
			noLeak(t)
			p := &slowParts{t: t, fail: -1}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(400*time.Millisecond, cancel)
			start := time.Now()
			var out bytes.Buffer
			var progress progressLog
			err := r.EncodeParts(ctx, Parts{Count: 6, Workers: 2, Open: p.open}, EncodeOptions{Format: format}, progress.report, &out)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("got %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > stopWithin {
				t.Errorf("cancel took %v", d)
			}
			if out.Len() != 0 || slices.Contains(progress.seen, 100) {
				t.Errorf("%d bytes written, progress %v", out.Len(), progress.seen)
			}
			if p.started != 2 {
				t.Errorf("%d parts started, want the 2 workers' first", p.started)
			}
			p.checkCut(t)
		})
	}
}

func TestEncodePartsPartFails(t *testing.T) {
	r := newRunner(t)
	for _, format := range []string{Opus, AAC} {
		t.Run(format, func(t *testing.T) {
			testkit.NoChildren(t)
			noLeak(t)
			// Part 2 dies after 200 ms while part 1 still has 30 s to go: the error is
			// part 2's, and part 1's producer is killed before its end (checkCut) and its
			// encoder too (NoChildren), well within the 30 s it would run (stopWithin).
			p := &slowParts{t: t, fail: 1}
			start := time.Now()
			var out bytes.Buffer
			err := r.EncodeParts(context.Background(), Parts{Count: 5, Workers: 2, Open: p.open}, EncodeOptions{Format: format}, nil, &out)
			if err == nil || !strings.Contains(err.Error(), "piece 2 of 5: producer died") {
				t.Errorf("got %v, want part 2's failure", err)
			}
			if d := time.Since(start); d > stopWithin {
				t.Errorf("took %v", d)
			}
			if out.Len() != 0 {
				t.Errorf("%d bytes written", out.Len())
			}
			if p.started != 2 {
				t.Errorf("%d parts started, want 2", p.started)
			}
			p.checkCut(t)
		})
	}
}

func TestEncodePartsProducerFailsAfterOutput(t *testing.T) {
	r := newRunner(t)
	wav := tone(t, 0.5, 440, "wav")
	p := &testParts{data: [][]byte{wav, wav, wav}, failClose: map[int]error{2: errors.New("espeak-ng: exit status 1")}}
	var out bytes.Buffer
	err := r.EncodeParts(context.Background(), p.parts(2), EncodeOptions{Format: MP3}, nil, &out)
	if err == nil || !strings.Contains(err.Error(), "piece 3 of 3: espeak-ng: exit status 1") {
		t.Errorf("got %v, want part 3's failure", err)
	}
	p.checkClosed(t)
}

func TestEncodePartsRefuses(t *testing.T) {
	r := New(Config{})
	open := func(context.Context, int) (io.ReadCloser, error) { return nil, errors.New("not called") }
	for _, tt := range []struct {
		name string
		src  Parts
		opts EncodeOptions
	}{
		{"no parts", Parts{Count: 0, Open: open}, EncodeOptions{Format: MP3}},
		{"no open", Parts{Count: 2}, EncodeOptions{Format: MP3}},
		{"format", Parts{Count: 2, Open: open}, EncodeOptions{Format: "wav"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := r.EncodeParts(context.Background(), tt.src, tt.opts, nil, io.Discard); err == nil {
				t.Error("accepted")
			}
		})
	}
}
