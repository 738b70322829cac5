package media

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Encode reads audio described by in from r and writes the file encoded as opts says to w.
// Formats whose muxer must seek back (flac) are written to a temp file first and then
// copied; the others stream straight from ffmpeg's standard output. On error, whatever was
// written to w is garbage and the caller discards it.
//
// If r is a pipe fed by a producer, the caller must unblock that producer when Encode
// returns early (for example with io.PipeReader.CloseWithError). EncodePieces does all of
// that for audio that arrives in pieces.
func (r *Runner) Encode(ctx context.Context, in Input, src io.Reader, opts EncodeOptions, w io.Writer) error {
	f, ok := formats[opts.Format]
	if !ok {
		return fmt.Errorf("encoding: unknown audio format %q", opts.Format)
	}
	if !f.seek {
		args, err := EncodeArgs(in, opts, "pipe:1")
		if err != nil {
			return fmt.Errorf("encoding %s: %w", opts.Format, err)
		}
		if err := r.FFmpeg(ctx, args, src, w); err != nil {
			return fmt.Errorf("encoding %s: %w", opts.Format, err)
		}
		return nil
	}

	tmp, err := os.CreateTemp(r.tempDir, "parla-encode-*."+f.Ext)
	if err != nil {
		return fmt.Errorf("encoding %s: creating temp file: %w", opts.Format, err)
	}
	name := tmp.Name()
	tmp.Close()
	defer os.Remove(name)
	args, err := EncodeArgs(in, opts, fileURL(name))
	if err != nil {
		return fmt.Errorf("encoding %s: %w", opts.Format, err)
	}
	if err := r.FFmpeg(ctx, args, src, nil); err != nil {
		return fmt.Errorf("encoding %s: %w", opts.Format, err)
	}
	out, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("encoding %s: reopening temp file: %w", opts.Format, err)
	}
	defer out.Close()
	if _, err := io.Copy(w, out); err != nil {
		return fmt.Errorf("encoding %s: copying result: %w", opts.Format, err)
	}
	return nil
}
