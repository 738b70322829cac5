// Package espeak is the self-hosted text-to-speech engine: espeak-ng synthesises the text,
// ffmpeg (through package media) encodes it into the ordered format.
//
// Long texts are cut on sentence boundaries into chunks that a small pool of espeak-ng
// processes synthesises in parallel; their samples are fed, in order, into one ffmpeg
// encode, so the file has a single header and no seams. espeak-ng is fast (about 20,000
// characters a second on one core); the encode of the resulting audio is the slow part.
package espeak

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strings"
	"sync"

	"parla/media"
	"parla/providers"
)

// Speaking rates in words per minute. espeak-ng's default (175) is speed 1; below 80 it
// will not go, and above 450 its speech-up path degrades, so the rest is done by ffmpeg.
const (
	normalWPM = 175
	minWPM    = 80
	maxWPM    = 450
)

// Rate maps a speed factor (0.25–4, 1 = normal) to espeak-ng's words per minute and the
// tempo factor ffmpeg's atempo must add for what espeak-ng cannot reach: speed 1 is 175 wpm
// and tempo 1; speed 0.25 is 80 wpm slowed further by 0.547; speed 4 is 450 wpm sped up by
// 1.556. wpm × tempo is always 175 × speed.
func Rate(speed float64) (wpm int, tempo float64) {
	want := normalWPM * speed
	wpm = int(math.Round(want))
	wpm = min(max(wpm, minWPM), maxWPM)
	tempo = want / float64(wpm)
	if math.Abs(tempo-1) < 0.005 { // rounding to whole wpm, not worth a filter
		tempo = 1
	}
	return wpm, tempo
}

// Config configures the engine.
type Config struct {
	// Binary is the espeak-ng program, a name looked up in PATH or a path. Default "espeak-ng".
	Binary string
	// Media runs ffmpeg. Default media.New(media.Config{}); pass the app's shared Runner so
	// its cap on concurrent ffmpeg processes covers this engine too.
	Media *media.Runner
	// ChunkChars is the largest piece of text one espeak-ng process gets. Default 1500
	// (about 90 seconds of speech, 4 MB of samples held in memory at a time).
	ChunkChars int
	// Workers is how many espeak-ng processes run at once for one request. Default 2.
	Workers int
}

// Speaker implements providers.Speaker with espeak-ng and ffmpeg.
type Speaker struct {
	binary  string
	media   *media.Runner
	chunk   int
	workers int
}

var _ providers.Speaker = (*Speaker)(nil)

// New returns the engine for cfg with defaults filled in. It does not look for the programs;
// Available does.
func New(cfg Config) *Speaker {
	if cfg.Binary == "" {
		cfg.Binary = "espeak-ng"
	}
	if cfg.Media == nil {
		cfg.Media = media.New(media.Config{})
	}
	if cfg.ChunkChars <= 0 {
		cfg.ChunkChars = 1500
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	return &Speaker{binary: cfg.Binary, media: cfg.Media, chunk: cfg.ChunkChars, workers: cfg.Workers}
}

// Available reports an error wrapping providers.ErrUnavailable when espeak-ng, ffmpeg or
// ffprobe cannot be found.
func (s *Speaker) Available() error {
	if _, err := exec.LookPath(s.binary); err != nil {
		return fmt.Errorf("espeak: %w: %s not found: %v", providers.ErrUnavailable, s.binary, err)
	}
	if err := s.media.Check(); err != nil {
		return fmt.Errorf("espeak: %w: %v", providers.ErrUnavailable, err)
	}
	if _, err := exec.LookPath(kakasiBinary); err != nil { // Japanese (kana.go)
		return fmt.Errorf("espeak: %w: %s not found: %v", providers.ErrUnavailable, kakasiBinary, err)
	}
	return nil
}

// chunkResult is one synthesised chunk: espeak-ng's WAV output.
type chunkResult struct {
	wav []byte
	err error
}

// Speak synthesises req.Text in req.Language (voices.go's plan) with the voice's espeak-ng
// variant at req.Speed and writes the file encoded as req.Format to w. Progress goes from 0 to 100 as chunks are encoded.
func (s *Speaker) Speak(ctx context.Context, req providers.SpeechRequest, w io.Writer) error {
	if err := req.Check("espeak"); err != nil {
		return err
	}
	chunks, err := plan(req, s.chunk)
	if err != nil {
		return err
	}
	wpm, tempo := Rate(req.Speed)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Workers synthesise chunks into memory; at most `window` chunks are being synthesised
	// or wait to be encoded at once, so a 50,000-character text never sits in memory as
	// 140 MB of samples. A slot is taken before a chunk is handed to a worker and given
	// back when the encoder has read the chunk.
	window := s.workers + 2
	results := make([]chan chunkResult, len(chunks))
	for i := range results {
		results[i] = make(chan chunkResult, 1)
	}
	ahead := make(chan struct{}, window)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(s.workers, len(chunks)) {
		wg.Go(func() {
			for i := range jobs {
				results[i] <- s.synthesise(ctx, chunks[i].Text, chunks[i].Voice, wpm)
			}
		})
	}
	wg.Go(func() {
		defer close(jobs)
		for i := range chunks {
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	})
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: stop the workers first on an early return

	pieces := media.Pieces{
		Count: len(chunks),
		WAV:   true,
		Open: func(ctx context.Context, i int) (io.Reader, error) {
			select {
			case res := <-results[i]:
				if res.err != nil {
					return nil, fmt.Errorf("synthesising: %w", res.err)
				}
				return &slotReader{Reader: bytes.NewReader(res.wav), slots: ahead}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}
	opts := media.EncodeOptions{Format: req.Format, Tempo: tempo}
	if err := s.media.EncodePieces(ctx, pieces, opts, req.Report, w); err != nil {
		return fmt.Errorf("espeak: %w", err)
	}
	return nil
}

// slotReader is a synthesised chunk that gives its look-ahead slot back when the encoder
// closes it.
type slotReader struct {
	*bytes.Reader
	slots chan struct{}
}

// Close frees the chunk's slot, so that one more chunk may be synthesised.
func (r *slotReader) Close() error {
	<-r.slots
	return nil
}

// synthesise runs one espeak-ng process for text and returns its WAV output. The text goes
// in on stdin, never as an argument, so a text starting with "-" is just text.
func (s *Speaker) synthesise(ctx context.Context, text, variant string, wpm int) chunkResult {
	cmd := exec.CommandContext(ctx, s.binary,
		"--stdout", // WAV to standard output instead of the sound card
		"-b", "1",  // input is UTF-8
		"-v", variant, // language + voice variant, e.g. en-us+m3
		"-s", fmt.Sprint(wpm), // words per minute
	)
	cmd.Stdin = strings.NewReader(text)
	var out bytes.Buffer
	out.Grow(len(text) * 3000) // ~2.7 KB of 22 kHz samples per character at 175 wpm
	stderr := &media.TailBuffer{}
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return chunkResult{err: ctx.Err()}
		}
		return chunkResult{err: fmt.Errorf("running espeak-ng: %w: %s", err, strings.TrimSpace(stderr.String()))}
	}
	return chunkResult{wav: out.Bytes()}
}
