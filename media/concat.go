package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Parts is a long audio made of independent parts, each produced by a process of its own
// (one espeak-ng run per part of a text), that EncodeParts encodes in parallel and joins.
type Parts struct {
	// Count is how many parts there are, at least one.
	Count int
	// Open starts part i and returns its audio, a WAV stream. It is called once per part,
	// from several goroutines at once, with a context that ends when the encode fails or is
	// cancelled. Close is called once the encoder has stopped reading, whether it read
	// everything or not; it must stop the producer if it still runs, wait for it and
	// return its failure: a producer that fails after some output must not pass for a
	// short part. A reader with a method File() *os.File (the reading end of the
	// producer's pipe) is given to ffmpeg as its standard input directly, so the audio
	// never passes through this process.
	Open func(ctx context.Context, i int) (io.ReadCloser, error)
	// Workers is how many parts are produced and encoded at once. Each encode also takes
	// one of the Runner's ffmpeg slots. Default 1.
	Workers int
}

// EncodeParts encodes src's parts in parallel, each into its own temp file, then joins
// them, in order, into one file encoded as opts says, written to w. The join copies the
// encoded audio, without a second encode: mp3 frames follow each other with no tag or
// Xing frame in between; Ogg Opus pages follow the first part's headers as one stream,
// granule positions counted on (see oggJoin); AAC parts are ADTS streams remuxed once
// into MP4; FLAC frames are renumbered under one STREAMINFO (see joinFLAC). A single part
// is encoded straight into the file, as Encode does.
//
// Each seam may add a few tens of milliseconds to the parts' own audio: the encoder delay
// and last-frame padding of lossy codecs (mp3 about 50–75 ms at 22 kHz, aac about 70 ms,
// opus under 30 ms; FLAC none). Speech engines' parts end on a pause, which it lengthens.
//
// progress (may be nil) is called with 0, then rises with the parts encoded, then 100
// when the file is written; it never goes back. The first part to fail stops every other
// producer and ffmpeg and is returned as "piece i of n: …"; whatever was written to w is
// then garbage and the caller discards it.
func (r *Runner) EncodeParts(ctx context.Context, src Parts, opts EncodeOptions, progress func(int), w io.Writer) error {
	if progress == nil {
		progress = func(int) {}
	}
	switch {
	case src.Count < 1:
		return fmt.Errorf("encoding parts: %d parts", src.Count)
	case src.Open == nil:
		return errors.New("encoding parts: no Open function")
	}
	f, ok := formats[opts.Format]
	if !ok {
		return fmt.Errorf("encoding: unknown audio format %q", opts.Format)
	}
	progress(0)
	if src.Count == 1 {
		if err := r.encodeOne(ctx, src, opts, w); err != nil {
			return err
		}
		progress(100)
		return nil
	}

	dir, err := os.MkdirTemp(r.tempDir, "parla-parts-*")
	if err != nil {
		return fmt.Errorf("encoding %d parts: %w", src.Count, err)
	}
	defer os.RemoveAll(dir)
	names := make([]string, src.Count)
	for i := range names {
		names[i] = fmt.Sprintf("part-%05d.%s", i, f.Ext)
	}

	// MP3 frames stand alone: the first part goes to w as it is encoded, so that a long
	// mp3 starts arriving at once (the API streams it); the others wait in their files.
	var first io.Writer
	if opts.Format == MP3 {
		first = w
	}
	firstErr := r.encodePartsInParallel(ctx, src, opts, dir, names, progress, first)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("encoding %s: %w", opts.Format, err)
	}
	if firstErr != nil {
		return fmt.Errorf("encoding %s: %w", opts.Format, firstErr)
	}
	if first != nil {
		names = names[1:]
	}
	if err := r.joinParts(ctx, dir, names, opts, w); err != nil {
		return fmt.Errorf("joining %d %s parts: %w", src.Count, opts.Format, err)
	}
	progress(100)
	return nil
}

// encodePartsInParallel encodes src's parts into dir under names, src.Workers at a time,
// telling progress up to 95 %, the first part to first instead when it is set; it
// returns the first part's own failure, and stops the others at it.
func (r *Runner) encodePartsInParallel(ctx context.Context, src Parts, opts EncodeOptions, dir string, names []string, progress func(int), first io.Writer) error {
	// The parts run under their own context, so that the first failure stops the others
	// and can still be told from a cancellation of the whole.
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		next     int   // the next part to start
		done     int   // parts encoded
		firstErr error // the first part's own failure, the one reported
		wg       sync.WaitGroup
	)
	// Encoding is 0–95 %: the join is quick, but not instant for an hour of audio.
	const encodingShare = 95
	for range max(1, min(src.Workers, src.Count)) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				stop := i >= src.Count || firstErr != nil || pctx.Err() != nil
				mu.Unlock()
				if stop {
					return
				}
				var to io.Writer
				if i == 0 {
					to = first
				}
				err := r.encodePart(pctx, src, i, opts, filepath.Join(dir, names[i]), to)
				mu.Lock()
				switch {
				case err != nil && firstErr == nil && ctx.Err() == nil:
					firstErr = fmt.Errorf("piece %d of %d: %w", i+1, src.Count, err)
					cancel()
				case err == nil && firstErr == nil:
					done++
					progress(done * encodingShare / src.Count)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return firstErr
}

// encodeOne encodes the only part straight into the file.
func (r *Runner) encodeOne(ctx context.Context, src Parts, opts EncodeOptions, w io.Writer) error {
	part, err := src.Open(ctx, 0)
	if err != nil {
		return fmt.Errorf("piece 1 of 1: %w", err)
	}
	err = r.Encode(ctx, WAV, stdin(part), opts, w)
	if perr := part.Close(); perr != nil {
		return fmt.Errorf("piece 1 of 1: %w", producerFirst(perr, err))
	}
	return err
}

// encodePart runs part i's producer into one ffmpeg encode to the file path, or to w when
// it is set.
func (r *Runner) encodePart(ctx context.Context, src Parts, i int, opts EncodeOptions, path string, w io.Writer) error {
	output := fileURL(path)
	if w != nil {
		output = "pipe:1"
	}
	args, err := PartArgs(opts, output)
	if err != nil {
		return err
	}
	part, err := src.Open(ctx, i)
	if err != nil {
		return err
	}
	err = r.FFmpeg(ctx, args, stdin(part), w)
	if perr := part.Close(); perr != nil {
		return producerFirst(perr, err)
	}
	return err
}

// stdin is what ffmpeg reads a part from: the producer's pipe itself when there is one.
func stdin(part io.Reader) io.Reader {
	if f, ok := part.(interface{ File() *os.File }); ok {
		return f.File()
	}
	return part
}

// producerFirst puts the producer's failure first: when it failed, ffmpeg's complaint (a
// WAV cut short, a broken pipe) is only the consequence.
func producerFirst(producer, encoder error) error {
	if encoder == nil {
		return producer
	}
	return fmt.Errorf("%w (then ffmpeg: %v)", producer, encoder)
}

// joinParts writes the encoded parts in dir, in order, to w as one file.
func (r *Runner) joinParts(ctx context.Context, dir string, names []string, opts EncodeOptions, w io.Writer) error {
	switch opts.Format {
	case MP3:
		// MP3 frames stand alone (each part's bit reservoir starts empty), so the file is
		// the parts' frames one after another.
		for _, name := range names {
			if err := copyFile(w, filepath.Join(dir, name)); err != nil {
				return err
			}
		}
		return nil
	case Opus:
		j := oggJoin{w: w}
		for i, name := range names {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return err
			}
			if err := j.add(data, i == len(names)-1); err != nil {
				return fmt.Errorf("part %d: %w", i+1, err)
			}
		}
		return nil
	case AAC:
		files := make([]io.Reader, 0, len(names))
		for _, name := range names {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				return err
			}
			defer f.Close()
			files = append(files, f)
		}
		return r.Encode(ctx, ADTS, io.MultiReader(files...), EncodeOptions{Format: AAC}, w)
	case FLAC:
		paths := make([]string, len(names))
		for i, name := range names {
			paths[i] = filepath.Join(dir, name)
		}
		return joinFLAC(w, paths)
	}
	return fmt.Errorf("unknown audio format %q", opts.Format)
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
