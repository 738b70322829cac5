// Package espeak is the self-hosted text-to-speech engine: espeak-ng synthesises the text,
// ffmpeg (through package media) encodes it into the ordered format.
//
// espeak-ng is fast (about 25,000 characters a second on one core); the encode of the
// resulting audio is the slow part (an hour of speech: 7 s of mp3 encoding). So long texts
// are cut on sentence boundaries into chunks, each synthesised by its own espeak-ng piped
// into its own ffmpeg encode, as many at once as there are cores, and the encoded chunks
// are joined without a second encode (media.EncodeParts).
package espeak

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

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
	// ChunkChars is the largest piece of text one espeak-ng process and its ffmpeg encode
	// get. Default 25000 (about 25 minutes of speech: 50,000 characters are one chunk for
	// each of 2 workers). Texts are cut into even chunks, in whole rounds of Workers (see
	// chunkSize).
	ChunkChars int
	// Workers is how many chunks are synthesised and encoded at once for one request (each
	// one espeak-ng and one ffmpeg process; the media Runner's cap on ffmpeg processes
	// holds across requests). Default runtime.NumCPU().
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
		cfg.ChunkChars = 25000
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
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

// Speak synthesises req.Text in req.Language (voices.go's plan) with the voice's espeak-ng
// variant at req.Speed and writes the file encoded as req.Format to w. Progress goes from 0
// to 100 as chunks are encoded.
//
// Each chunk is one espeak-ng process piped straight into its own ffmpeg encode, up to
// Workers of them at once (and no more ffmpeg processes than the media Runner allows);
// the encoded chunks are then joined without a second encode (media.EncodeParts). No
// samples are held in memory: they only pass through a pipe.
func (s *Speaker) Speak(ctx context.Context, req providers.SpeechRequest, w io.Writer) error {
	if err := req.Check("espeak"); err != nil {
		return err
	}
	chunks, err := plan(req, chunkSize(utf8.RuneCountInString(req.Text), s.workers, s.chunk))
	if err != nil {
		return err
	}
	wpm, tempo := Rate(req.Speed)
	parts := media.Parts{
		Count:   len(chunks),
		Workers: s.workers,
		Open: func(ctx context.Context, i int) (io.ReadCloser, error) {
			return s.synthesise(ctx, chunks[i].Text, chunks[i].Voice, wpm)
		},
	}
	opts := media.EncodeOptions{Format: req.Format, Tempo: tempo}
	if err := s.media.EncodeParts(ctx, parts, opts, req.Report, w); err != nil {
		return fmt.Errorf("espeak: %w", err)
	}
	return nil
}

// minChunk is the smallest chunk worth a process pair of its own: 1500 characters are about
// 95 seconds of speech, whose mp3 encode (0.2 s) still outweighs the start of espeak-ng and
// ffmpeg (about 60 ms of CPU together).
const minChunk = 1500

// chunkSize returns the size of a chunk, in characters, for a text of n characters read
// by workers parallel workers, at most maxChars: the text is shared out evenly (plan cuts
// it with media.SplitEven) in the fewest whole rounds of workers chunks that keep chunks
// within maxChars, so that every worker gets the same work and none idles at the end
// while another still encodes; chunks are never smaller than minChunk (unless maxChars
// is). Before, the text was cut greedily into full chunks and a short last one (50,000
// characters into 13,750 × 3 and 8,750 for 2 workers: one worker read 27,500 characters
// while the other read 22,500, 10 % past an even share). Even chunks need no second
// round: each chunk costs an espeak-ng and an ffmpeg start (about 0.3 s of CPU here), and
// on 50,000 characters of mp3 (BenchmarkSpeak50kVsBare, 3 runs each, load 10–12) one
// round of 2 used 0.2 % more CPU than the bare pipeline and took 0.51 of its time, two
// rounds of 2 2.3 % more and 0.72.
func chunkSize(n, workers, maxChars int) int {
	workers = max(workers, 1)
	parts := ceilDiv(max(workers, ceilDiv(n, maxChars)), workers) * workers
	return min(maxChars, max(minChunk, ceilDiv(n, parts)))
}

func ceilDiv(a, b int) int {
	return (a + b - 1) / b
}

// Args builds espeak-ng's arguments for one chunk. The text goes in on standard input, never
// as an argument, so a text starting with "-" is just text.
func Args(voice string, wpm int) []string {
	return []string{
		"--stdout", // WAV to standard output instead of the sound card
		"-b", "1",  // input is UTF-8
		"-v", voice, // language + voice variant, e.g. en-us+m3
		"-s", strconv.Itoa(wpm), // words per minute
	}
}

// synthesise starts one espeak-ng process reading text with voice (its -v argument) and
// returns its WAV output as it comes; Close waits for the process.
func (s *Speaker) synthesise(ctx context.Context, text, voice string, wpm int) (io.ReadCloser, error) {
	if err := media.ProcessGate(ctx); err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, s.binary, Args(voice, wpm)...)
	cmd.Stdin = strings.NewReader(text)
	stderr := &media.TailBuffer{}
	cmd.Stdout, cmd.Stderr = pw, stderr
	err = cmd.Start()
	pw.Close() // espeak-ng holds the writing end now
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("running espeak-ng: %w", err)
	}
	return &synthesis{out: pr, ctx: ctx, cmd: cmd, stderr: stderr}, nil
}

// synthesis is a running espeak-ng: its output, and its exit status on Close.
type synthesis struct {
	out    *os.File
	ctx    context.Context
	cmd    *exec.Cmd
	stderr *media.TailBuffer
}

// Read reads espeak-ng's output.
func (p *synthesis) Read(b []byte) (int, error) { return p.out.Read(b) }

// File is the reading end of espeak-ng's output pipe, which ffmpeg then reads directly.
func (p *synthesis) File() *os.File { return p.out }

// Close stops reading (espeak-ng, if still writing, fails on the closed pipe), waits for
// the process and reports how it ended.
func (p *synthesis) Close() error {
	p.out.Close()
	if err := p.cmd.Wait(); err != nil {
		if p.ctx.Err() != nil {
			return p.ctx.Err()
		}
		return fmt.Errorf("running espeak-ng: %w: %s", err, strings.TrimSpace(p.stderr.String()))
	}
	return nil
}
