// Package media runs ffmpeg and ffprobe for the rest of the app: it probes files
// (probe.go), measures the audio and the speech in them (check.go, speech.go), decodes them
// to PCM for whisper and cuts long recordings into chunks (pcm.go, chunk.go), reads relayed
// video links (remote.go), encodes raw speech audio into the formats visitors can order,
// joins parts encoded in parallel without a second encode (concat.go, ogg.go, flac.go), and
// splits long texts for speech engines (text.go). Every command line is built by a pure
// function (the …Args functions: args.go and the file of each step) so it can be compared
// against a golden list in tests; Runner executes them with a context, a cap on concurrent
// ffmpeg processes and a bounded stderr tail folded into errors.
//
// A measure decodes the whole file as the engines get it (PCMArgs) and counts its samples
// and its silences in Go (Measure, speech.go): the length the engines hear sets the price,
// never the header's claim nor the file's own timestamps (ffmpeg's -t goes by those, so no
// measure is cut by it). The header only has to agree with the samples (checkDurations:
// ErrDurationMismatch). Measuring has one entry point per use, each with its bounds, and
// each stops reading as soon as the samples pass its limit:
//
//   - a visitor's upload: CheckUpload (upload.go). At most the longest duration given,
//     DensityLimit of the file's size and twice the header's claim (ErrTooLong,
//     ErrTooDense, ErrDurationMismatch), for at most MeasureDeadline of its size in CPU
//     time.
//   - a video link, before it is ordered: MeasureRemoteBounded (visitors.go), over a relay
//     URL only, the same bounds from the header's claim, the service's maximum and the
//     announced size.
//   - media fetched after payment: CheckPaid (lying.go), stopped just past EngineLimit of
//     the paid length (ErrTooLong, refunded). The engines' own decodes are capped at
//     EngineLimit too, a backstop against a file that changed, never the way a price is
//     made.
//
// A visitor's free request (the first two) runs in the visitors' own pool
// (Config.MaxVisitors), its decodes at nice 19 (visitors.go), so paid work and previews,
// in the shared pool (Config.MaxConcurrent), keep the cores and never wait behind it.
package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// ErrMissingTool is returned (wrapped) when ffmpeg or ffprobe cannot be found.
var ErrMissingTool = errors.New("media tool not installed")

// stderrLimit is how much of a failing program's stderr ends up in the error: enough for
// ffmpeg's last few lines, which name the cause, without copying a whole log around.
const stderrLimit = 4096

// Config says where the tools are and how many ffmpeg processes may run at once.
type Config struct {
	// FFmpeg is the ffmpeg program, a name looked up in PATH or a path. Default "ffmpeg".
	FFmpeg string
	// FFprobe is the ffprobe program. Default "ffprobe".
	FFprobe string
	// MaxConcurrent caps simultaneous ffmpeg processes (ffprobe is not capped: it is cheap
	// and must not queue behind a long encode). Default runtime.NumCPU().
	MaxConcurrent int
	// MaxVisitors caps the measures of visitors' uploads (CheckUpload), which run in a pool
	// of their own: paid work and previews never wait behind a visitor's file, however
	// costly. Default half of runtime.NumCPU(), at least 1.
	MaxVisitors int
	// TempDir holds the short-lived files of encoders that must seek back in their output
	// (flac). Default os.TempDir().
	TempDir string
}

// Runner executes ffmpeg and ffprobe. It is safe for concurrent use; build one in main.go and
// share it so the concurrency cap holds for the whole process.
type Runner struct {
	ffmpeg, ffprobe string
	tempDir         string
	sem             chan struct{}
	visitors        chan struct{} // CheckUpload's own slots
}

// New returns a Runner for cfg, filling in defaults. It does not check that the tools exist;
// call Check for that, so the app can start (and report engines unavailable) without them.
func New(cfg Config) *Runner {
	if cfg.FFmpeg == "" {
		cfg.FFmpeg = "ffmpeg"
	}
	if cfg.FFprobe == "" {
		cfg.FFprobe = "ffprobe"
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = runtime.NumCPU()
	}
	if cfg.MaxVisitors <= 0 {
		cfg.MaxVisitors = max(1, runtime.NumCPU()/2)
	}
	return &Runner{
		ffmpeg:   cfg.FFmpeg,
		ffprobe:  cfg.FFprobe,
		tempDir:  cfg.TempDir,
		sem:      make(chan struct{}, cfg.MaxConcurrent),
		visitors: make(chan struct{}, cfg.MaxVisitors),
	}
}

// Check reports nil when both ffmpeg and ffprobe can be run, or an error wrapping
// ErrMissingTool that names the missing one.
func (r *Runner) Check() error {
	for _, name := range []string{r.ffmpeg, r.ffprobe} {
		if _, err := exec.LookPath(name); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrMissingTool, name, err)
		}
	}
	return nil
}

// FFmpeg runs ffmpeg with args, feeding stdin (may be nil) and streaming its standard
// output to stdout (may be nil). It waits for a free slot under the concurrency cap first.
func (r *Runner) FFmpeg(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	release, err := slot(ctx, r.sem)
	if err != nil {
		return err
	}
	defer release()
	return run(ctx, r.ffmpeg, args, stdin, stdout)
}

// slot waits for a free place in pool and returns what gives it back.
func slot(ctx context.Context, pool chan struct{}) (func(), error) {
	select {
	case pool <- struct{}{}:
		return func() { <-pool }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for an ffmpeg slot: %w", ctx.Err())
	}
}

// FFprobe runs ffprobe with args and streams its standard output to stdout.
func (r *Runner) FFprobe(ctx context.Context, args []string, stdout io.Writer) error {
	return run(ctx, r.ffprobe, args, nil, stdout)
}

// run executes one program. The stderr tail is folded into the error, and a cancelled
// context is reported as such rather than as "signal: killed".
func run(ctx context.Context, program string, args []string, stdin io.Reader, stdout io.Writer) error {
	if _, err := exec.LookPath(program); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMissingTool, program, err)
	}
	if err := ProcessGate(ctx); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	stderr := &TailBuffer{Limit: stderrLimit}
	cmd.Stderr = stderr
	// Without a delay, Wait can hang on a copying goroutine whose reader never ends after
	// the process was killed; give the pipes a moment, then give up on them.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	name := baseName(program)
	if ctx.Err() != nil {
		return fmt.Errorf("running %s: %w", name, ctx.Err())
	}
	if tail := strings.TrimSpace(stderr.String()); tail != "" {
		return fmt.Errorf("running %s: %w: %s", name, err, tail)
	}
	return fmt.Errorf("running %s: %w", name, err)
}

func baseName(program string) string {
	if i := strings.LastIndexByte(program, os.PathSeparator); i >= 0 {
		return program[i+1:]
	}
	return program
}

// TailBuffer is an io.Writer that keeps only the last Limit bytes written to it, used to
// capture a program's stderr without letting a chatty process grow memory without bound.
type TailBuffer struct {
	// Limit is the number of bytes kept; 0 means 4096.
	Limit int

	mu  sync.Mutex
	buf []byte
	cut bool
}

// Write keeps the tail of p appended to what was kept so far. It never fails.
func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := b.Limit
	if limit <= 0 {
		limit = stderrLimit
	}
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.cut = true
	}
	return len(p), nil
}

// String returns the kept bytes, prefixed with "…" when earlier output was dropped.
func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := string(bytes.ToValidUTF8(b.buf, nil))
	if b.cut {
		return "…" + s
	}
	return s
}
