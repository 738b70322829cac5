package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// Pieces is a sequence of raw audio pieces (a speech engine's answers for consecutive parts
// of one text) that EncodePieces joins into one file.
type Pieces struct {
	// Count is how many pieces there are, at least one.
	Count int
	// Input is the layout of every piece when they are raw PCM: PCM(rate, channels).
	// Leave it zero when WAV is set.
	Input Input
	// WAV says that each piece starts with its own WAV header. Every header must announce
	// the same 16-bit layout; the encoder is started on the first one's.
	WAV bool
	// Open returns piece i. It is called once per piece, in order (i = 0 … Count-1), each
	// call after the previous piece was read to its end, with a context that ends when the
	// encode fails or is cancelled. A piece that is an io.Closer is closed once read, or
	// when the encode stops.
	Open func(ctx context.Context, i int) (io.Reader, error)
}

// errEncoderStopped cancels the pieces' context when ffmpeg ended before all of them were
// fed: the piece being opened then is not worth waiting for.
var errEncoderStopped = errors.New("encoder stopped")

// EncodePieces feeds src's pieces, in order, into one ffmpeg encode and writes the file
// encoded as opts says to w: one header, no seams at the joins. Each piece keeps whole
// sample frames: a torn last frame is padded with silence, so that it cannot shift every
// later sample. progress (may be nil) is called with 0, then up to 99 as pieces are fed,
// then 100 when the file is written.
//
// An error in piece i stops ffmpeg, rather than letting it finish a truncated file, and is
// returned as "piece i of n: …"; when ffmpeg fails first, its error is returned. Either
// way, whatever was written to w is garbage and the caller discards it.
func (r *Runner) EncodePieces(ctx context.Context, src Pieces, opts EncodeOptions, progress func(int), w io.Writer) error {
	if progress == nil {
		progress = func(int) {}
	}
	if err := src.check(opts); err != nil {
		return err
	}
	progress(0)
	// The cause tells a piece that failed because ffmpeg was gone from one that failed on
	// its own.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)

	// Piece 0 is opened before ffmpeg starts: a WAV header gives the layout, and a first
	// piece that fails (an API refusing the text) costs no ffmpeg run.
	first, in, err := src.open(ctx, 0, Input{})
	if err != nil {
		return fmt.Errorf("piece 1 of %d: %w", src.Count, err)
	}
	// An OS pipe rather than io.Pipe: ffmpeg reads it directly, with no copying goroutine
	// in between, and once ffmpeg is gone (and pr closed) a write fails at once.
	pr, pw, err := os.Pipe()
	if err != nil {
		closePiece(first)
		return fmt.Errorf("encoding %d pieces: %w", src.Count, err)
	}
	encoded := make(chan error, 1)
	go func() {
		err := r.Encode(ctx, in, pr, opts, w)
		if err != nil {
			stop(errEncoderStopped)
		}
		pr.Close() // a feed blocked on a full pipe now fails instead of waiting forever
		encoded <- err
	}()

	// fail stops ffmpeg after an error in piece i and says which error counts.
	fail := func(i int, err error, encoderGone bool) error {
		stop(err)
		pw.Close()
		encErr := <-encoded
		if encErr != nil && (encoderGone || errors.Is(context.Cause(ctx), errEncoderStopped)) {
			return encErr // ffmpeg failed first: the piece only noticed
		}
		return fmt.Errorf("piece %d of %d: %w", i+1, src.Count, err)
	}
	frame := 2 * in.Channels // s16le
	piece := first
	for i := range src.Count {
		if i > 0 {
			if piece, _, err = src.open(ctx, i, in); err != nil {
				return fail(i, err, false)
			}
		}
		encoderGone, err := feed(pw, piece, frame)
		closePiece(piece)
		if err != nil {
			return fail(i, err, encoderGone)
		}
		progress((i + 1) * 99 / src.Count)
	}
	if err := pw.Close(); err != nil {
		return fail(src.Count-1, err, true)
	}
	if err := <-encoded; err != nil {
		return err
	}
	progress(100)
	return nil
}

// check refuses what no encode can use, before any piece is asked for (an API call costs).
func (p Pieces) check(opts EncodeOptions) error {
	switch {
	case p.Count < 1:
		return fmt.Errorf("encoding pieces: %d pieces", p.Count)
	case p.Open == nil:
		return errors.New("encoding pieces: no Open function")
	case p.WAV && p.Input != (Input{}):
		return errors.New("encoding pieces: WAV pieces take no Input layout")
	case !p.WAV && (p.Input.Container != "s16le" || p.Input.SampleRate <= 0 || p.Input.Channels <= 0):
		return fmt.Errorf("encoding pieces: input %+v is not raw PCM with a rate and channels", p.Input)
	}
	if _, ok := formats[opts.Format]; !ok {
		return fmt.Errorf("encoding: unknown audio format %q", opts.Format)
	}
	return nil
}

// open opens piece i. For WAV pieces it consumes the header, so the reader returned yields
// raw samples, and checks the layout against want (zero for the first piece); the layout
// returned is the PCM input the encoder reads.
func (p Pieces) open(ctx context.Context, i int, want Input) (io.Reader, Input, error) {
	piece, err := p.Open(ctx, i)
	if err != nil {
		return nil, Input{}, err
	}
	if !p.WAV {
		return piece, p.Input, nil
	}
	f, err := ReadWAVHeader(piece)
	if err != nil {
		closePiece(piece)
		return nil, Input{}, err
	}
	in := PCM(f.SampleRate, f.Channels)
	switch {
	case f.BitsPerSample != 16 || f.Channels < 1:
		err = fmt.Errorf("%d-bit WAV with %d channels, want 16-bit", f.BitsPerSample, f.Channels)
	case want != (Input{}) && in != want:
		err = fmt.Errorf("WAV of %d Hz, %d channels after pieces of %d Hz, %d channels",
			in.SampleRate, in.Channels, want.SampleRate, want.Channels)
	}
	if err != nil {
		closePiece(piece)
		return nil, Input{}, err
	}
	return piece, in, nil
}

// feed copies one piece into the encoder's pipe, padding a torn last frame with zeros.
// encoderGone says that writing failed, not reading the piece.
func feed(pw io.Writer, piece io.Reader, frame int) (encoderGone bool, err error) {
	cw := &countingWriter{w: pw}
	if _, err := io.Copy(cw, piece); err != nil {
		if cw.err != nil {
			return true, cw.err
		}
		return false, fmt.Errorf("reading: %w", err)
	}
	if torn := cw.n % int64(frame); torn != 0 {
		if _, err := pw.Write(make([]byte, int64(frame)-torn)); err != nil {
			return true, err
		}
	}
	return false, nil
}

// countingWriter counts the bytes written through it and keeps the write error, which
// io.Copy does not tell apart from a read error.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

// closePiece closes a piece that needs closing.
func closePiece(piece io.Reader) {
	if c, ok := piece.(io.Closer); ok {
		c.Close()
	}
}
