package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers/testkit"
)

// testPieces serves data as pieces and records what the pipeline does with them.
type testPieces struct {
	data [][]byte
	// failOpen makes Open(i) fail with the error; failRead makes piece i fail after
	// half of its bytes; block makes Open(i) wait for the end of its context.
	failOpen, failRead map[int]error
	block              map[int]bool

	mu             sync.Mutex
	opened, closed []int
}

func (p *testPieces) pieces(in Input, wav bool) Pieces {
	return Pieces{Count: len(p.data), Input: in, WAV: wav, Open: p.open}
}

func (p *testPieces) open(ctx context.Context, i int) (io.Reader, error) {
	p.mu.Lock()
	p.opened = append(p.opened, i)
	p.mu.Unlock()
	if err := p.failOpen[i]; err != nil {
		return nil, err
	}
	if p.block[i] {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	var r io.Reader = bytes.NewReader(p.data[i])
	if err := p.failRead[i]; err != nil {
		half := len(p.data[i]) / 2
		r = io.MultiReader(bytes.NewReader(p.data[i][:half]), &errReader{err})
	}
	return &trackedPiece{Reader: r, close: func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.closed = append(p.closed, i)
	}}, nil
}

// checkClosed fails the test unless every piece that was opened, and only those, was
// closed, each once.
func (p *testPieces) checkClosed(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var wantClosed []int
	for _, i := range p.opened {
		if p.failOpen[i] == nil && !p.block[i] {
			wantClosed = append(wantClosed, i)
		}
	}
	if !slices.Equal(p.closed, wantClosed) {
		t.Errorf("closed pieces %v, want %v (opened %v)", p.closed, wantClosed, p.opened)
	}
}

type trackedPiece struct {
	io.Reader
	close func()
}

func (p *trackedPiece) Close() error {
	p.close()
	return nil
}

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

// stopWithin bounds how long a test that proves "stopped at once" lets the stop take. What
// those tests stop would run 30 s (slowParts) or for ever (an endless feed, a blocked
// piece), so 20 s still proves the stop, and the tests prove it by what happened as well
// (producers killed, processes and goroutines gone, no output). Not stretched by
// testkit.Timeout: 60 s would no longer prove it. A loaded 2-core runner took 5.6 s where
// an idle one takes 0.3 s (issue 27).
const stopWithin = 20 * time.Second

// noLeak fails the test when goroutines started during it are still running at its end.
// Top-level tests that do not call t.Parallel run alone, so the count is theirs.
func noLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		testkit.WaitFor(10*time.Second, func() bool { return runtime.NumGoroutine() <= before })
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("%d goroutines left running, %d before", n, before)
		}
	})
}

// progressLog records progress reports.
type progressLog struct {
	mu   sync.Mutex
	seen []int
}

func (l *progressLog) report(p int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, p)
}

func TestEncodePieces(t *testing.T) {
	r := newRunner(t)
	seconds := []float64{0.7, 1.3, 0.5}
	var want time.Duration
	var wavs, pcms [][]byte
	for _, s := range seconds {
		want += time.Duration(s * float64(time.Second))
		wavs = append(wavs, sine(t, s, 22050, "wav"))
		pcms = append(pcms, sine(t, s, 24000, "s16le"))
	}
	tests := []struct {
		name string
		src  Pieces
	}{
		{"wav", (&testPieces{data: wavs}).pieces(Input{}, true)},
		{"pcm", (&testPieces{data: pcms}).pieces(PCM(24000, 1), false)},
	}
	for _, format := range []string{MP3, Opus, AAC, FLAC} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				var out bytes.Buffer
				var progress progressLog
				if err := r.EncodePieces(context.Background(), tt.src, EncodeOptions{Format: format}, progress.report, &out); err != nil {
					t.Fatal(err)
				}
				f, _ := Format(format)
				info := probeBytes(t, r, out.Bytes(), f.Ext)
				if info.Codec != f.Codec {
					t.Errorf("codec %q, want %q", info.Codec, f.Codec)
				}
				if !near(info.Duration, want, 0.01) {
					t.Errorf("duration %v, want about %v (the sum of the pieces)", info.Duration, want)
				}
				if wantProgress := []int{0, 33, 66, 99, 100}; !slices.Equal(progress.seen, wantProgress) {
					t.Errorf("progress %v, want %v", progress.seen, wantProgress)
				}
			})
		}
	}
}

// stereo turns mono s16le samples into two identical channels.
func stereo(mono []byte) []byte {
	out := make([]byte, 0, 2*len(mono))
	for i := 0; i+1 < len(mono); i += 2 {
		out = append(out, mono[i], mono[i+1], mono[i], mono[i+1])
	}
	return out
}

// wavOf puts a canonical 44-byte WAV header for 16-bit samples in front of pcm.
func wavOf(pcm []byte, rate, channels int) []byte {
	return wavBits(pcm, rate, channels, 16)
}

// wavBits puts a canonical WAV header for bits-bit samples in front of pcm.
func wavBits(pcm []byte, rate, channels, bits int) []byte {
	h := []byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00")
	le := func(v, n int) {
		for range n {
			h = append(h, byte(v))
			v >>= 8
		}
	}
	frame := channels * bits / 8
	le(channels, 2)
	le(rate, 4)
	le(rate*frame, 4)
	le(frame, 2)
	le(bits, 2)
	h = append(h, "data"...)
	le(len(pcm), 4)
	return append(h, pcm...)
}

// TestEncodePiecesTornFrame feeds a piece that ends in the middle of a sample frame and
// decodes the lossless result: the torn frame is padded with silence and the next piece
// arrives intact, not shifted by the missing bytes.
func TestEncodePiecesTornFrame(t *testing.T) {
	r := newRunner(t)
	a := stereo(sine(t, 0.3, 24000, "s16le"))
	b := stereo(sine(t, 0.2, 24000, "s16le"))
	c := stereo(sine(t, 0.4, 24000, "s16le"))
	torn := b[:len(b)-3] // one byte of the last frame's four is left
	want := slices.Concat(a, torn, []byte{0, 0, 0}, c)
	tests := []struct {
		name string
		src  Pieces
	}{
		{"pcm", (&testPieces{data: [][]byte{a, torn, c}}).pieces(PCM(24000, 2), false)},
		{"wav", (&testPieces{data: [][]byte{wavOf(a, 24000, 2), wavOf(torn, 24000, 2), wavOf(c, 24000, 2)}}).pieces(Input{}, true)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var flac bytes.Buffer
			if err := r.EncodePieces(context.Background(), tt.src, EncodeOptions{Format: FLAC}, nil, &flac); err != nil {
				t.Fatal(err)
			}
			// Decoded by PATH's ffmpeg: the raw s16le muxer is the test's, not Parla's (the
			// image's ffmpeg has none, see TestFFmpegBuild).
			var got bytes.Buffer
			decode := exec.Command(testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "flac", "-i", "pipe:0", "-f", "s16le", "pipe:1")
			decode.Stdin, decode.Stdout = &flac, &got
			if err := decode.Run(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("decoded %d bytes, want %d; first difference at byte %d", got.Len(), len(want), firstDiff(got.Bytes(), want))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestEncodePiecesRefusesWAVLayouts(t *testing.T) {
	r := newRunner(t)
	mono22 := sine(t, 0.3, 22050, "wav")
	tests := []struct {
		name   string
		data   [][]byte
		want   string
		opened int
	}{
		{"another rate", [][]byte{mono22, sine(t, 0.3, 24000, "wav"), mono22}, "piece 2 of 3: WAV of 24000 Hz, 1 channels after pieces of 22050 Hz, 1 channels", 2},
		{"another channel count", [][]byte{mono22, wavOf(stereo(sine(t, 0.3, 22050, "s16le")), 22050, 2)}, "piece 2 of 2: WAV of 22050 Hz, 2 channels", 2},
		{"8-bit", [][]byte{wavBits(make([]byte, 800), 8000, 1, 8)}, "piece 1 of 1: 8-bit WAV", 1},
		{"not WAV", [][]byte{mono22, []byte("ID3 certainly not a WAV file")}, "piece 2 of 2: " + ErrNotWAV.Error(), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeak(t)
			p := &testPieces{data: tt.data}
			var out bytes.Buffer
			err := r.EncodePieces(context.Background(), p.pieces(Input{}, true), EncodeOptions{Format: FLAC}, nil, &out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if len(p.opened) != tt.opened {
				t.Errorf("opened %v, want %d pieces", p.opened, tt.opened)
			}
			if out.Len() != 0 {
				t.Errorf("%d bytes written: ffmpeg finished a file", out.Len())
			}
			p.checkClosed(t)
		})
	}
}

// TestEncodePiecesPieceError checks that a failing piece stops ffmpeg (the flac encoder,
// which writes its file only when it finishes, writes nothing), is named in the error, and
// that no later piece is asked for.
func TestEncodePiecesPieceError(t *testing.T) {
	r := newRunner(t)
	pcm := sine(t, 2, 24000, "s16le")
	errAPI := errors.New("the API said no")
	tests := []struct {
		name string
		p    *testPieces
		want string
	}{
		{"open", &testPieces{data: [][]byte{pcm, pcm, pcm}, failOpen: map[int]error{1: errAPI}}, "piece 2 of 3: the API said no"},
		{"read", &testPieces{data: [][]byte{pcm, pcm, pcm}, failRead: map[int]error{1: errAPI}}, "piece 2 of 3: reading: the API said no"},
		{"first", &testPieces{data: [][]byte{pcm, pcm, pcm}, failOpen: map[int]error{0: errAPI}}, "piece 1 of 3: the API said no"},
	}
	for _, format := range []string{FLAC, MP3} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				noLeak(t)
				p := &testPieces{data: tt.p.data, failOpen: tt.p.failOpen, failRead: tt.p.failRead}
				var out bytes.Buffer
				var progress progressLog
				err := r.EncodePieces(context.Background(), p.pieces(PCM(24000, 1), false), EncodeOptions{Format: format}, progress.report, &out)
				if !errors.Is(err, errAPI) || err.Error() != tt.want {
					t.Fatalf("got %v, want %q", err, tt.want)
				}
				if slices.Contains(p.opened, 2) {
					t.Errorf("opened %v: went on after the failed piece", p.opened)
				}
				if format == FLAC && out.Len() != 0 {
					t.Errorf("%d bytes written: ffmpeg finished a truncated file", out.Len())
				}
				if slices.Contains(progress.seen, 100) {
					t.Errorf("progress %v reached 100", progress.seen)
				}
				p.checkClosed(t)
			})
		}
	}
}

// fakeFFmpeg writes a program that fails like ffmpeg refusing its input, without reading
// it, and returns a Runner that uses it.
func fakeFFmpeg(t *testing.T) *Runner {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ffmpeg")
	script := "#!/bin/sh\necho 'pipe:0: Invalid data found when processing input' >&2\nexit 1\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return New(Config{FFmpeg: path, TempDir: t.TempDir()})
}

// TestEncodePiecesFFmpegFails checks that when ffmpeg fails first, its error is returned,
// not the error a piece then meets, and that a piece being waited for is given up at once.
func TestEncodePiecesFFmpegFails(t *testing.T) {
	pcm := sine(t, 5, 24000, "s16le") // 240 KB: more than a pipe holds
	tests := []struct {
		name string
		r    *Runner
		opts EncodeOptions
		p    *testPieces
		want string
	}{
		{"unknown format", newRunner(t), EncodeOptions{Format: "wma"}, &testPieces{data: [][]byte{pcm}}, `unknown audio format "wma"`},
		{"while writing", fakeFFmpeg(t), EncodeOptions{Format: MP3}, &testPieces{data: [][]byte{pcm, pcm, pcm}}, "Invalid data found"},
		{"while waiting for a piece", fakeFFmpeg(t), EncodeOptions{Format: Opus}, &testPieces{data: [][]byte{pcm[:100], pcm}, block: map[int]bool{1: true}}, "Invalid data found"},
		{"to a temp file", fakeFFmpeg(t), EncodeOptions{Format: FLAC}, &testPieces{data: [][]byte{pcm, pcm, pcm}}, "Invalid data found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeak(t)
			start := time.Now()
			var out bytes.Buffer
			err := tt.r.EncodePieces(context.Background(), tt.p.pieces(PCM(24000, 1), false), tt.opts, nil, &out)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "piece") {
				t.Fatalf("got %v, want the encoder's error (%q)", err, tt.want)
			}
			// "while waiting for a piece" would wait for ever had the failure not stopped it.
			if d := time.Since(start); d > stopWithin {
				t.Errorf("took %v", d)
			}
			tt.p.checkClosed(t)
		})
	}
}

func TestEncodePiecesCancel(t *testing.T) {
	r := newRunner(t)
	pcm := sine(t, 1, 24000, "s16le")
	tests := []struct {
		name string
		p    *testPieces
	}{
		// Cancelled while a piece is awaited, then while ffmpeg encodes an endless feed.
		{"waiting for a piece", &testPieces{data: [][]byte{pcm, pcm}, block: map[int]bool{1: true}}},
		{"encoding", &testPieces{data: slices.Repeat([][]byte{pcm}, 100000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeak(t)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			var out bytes.Buffer
			err := r.EncodePieces(ctx, tt.p.pieces(PCM(24000, 1), false), EncodeOptions{Format: AAC}, nil, &out)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("got %v, want context.Canceled", err)
			}
			// Either case runs for ever (a blocked piece, 28 h of pieces) uncancelled.
			if d := time.Since(start); d > stopWithin {
				t.Errorf("cancel took %v", d)
			}
			if out.Len() != 0 {
				t.Errorf("%d bytes written", out.Len())
			}
			tt.p.checkClosed(t)
		})
	}
}

func TestEncodePiecesRefusesBadPieces(t *testing.T) {
	open := func(context.Context, int) (io.Reader, error) {
		t.Error("a piece was opened")
		return nil, errors.New("unreachable")
	}
	tests := []struct {
		name string
		src  Pieces
	}{
		{"no pieces", Pieces{Count: 0, Input: PCM(24000, 1), Open: open}},
		{"no Open", Pieces{Count: 1, Input: PCM(24000, 1)}},
		{"no layout", Pieces{Count: 1, Open: open}},
		{"not raw PCM", Pieces{Count: 1, Input: WAV, Open: open}},
		{"WAV with a layout", Pieces{Count: 1, WAV: true, Input: PCM(24000, 1), Open: open}},
	}
	r := New(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := r.EncodePieces(context.Background(), tt.src, EncodeOptions{Format: MP3}, nil, io.Discard); err == nil {
				t.Error("accepted")
			}
		})
	}
}
