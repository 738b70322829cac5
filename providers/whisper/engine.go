// Package whisper is the self-hosted speech-to-text engine: whisper.cpp run in-process
// through its Go bindings. The cgo layer (cgo_whisper.go) is compiled only with the
// `whisper` build tag and a libwhisper to link against; without it the engine exists but
// reports itself unavailable, so the app builds and runs anywhere and closes the service.
//
// Everything around the model is plain Go and tested without the tag: decoding the upload
// to 16 kHz mono samples (media.Runner.DecodePCM), progress, cancellation and building the
// transcript from the model's segments.
package whisper

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/transcript"
)

// Config says which model to load and how to run it.
type Config struct {
	// Model is the path of a ggml whisper model file (see models/README.md).
	Model string
	// Threads the model computes with. Default runtime.NumCPU().
	Threads int
	// Media decodes uploads. Default: ffmpeg from PATH.
	Media *media.Runner
	// VAD says how the speech is found before the model runs: VADAuto (default), VADSilero,
	// VADSilence or VADOff (see speech.go).
	VAD string
	// VADModel is the Silero VAD model file (ggml) for VADSilero (see models/README.md).
	VADModel string
	// NoWords turns whisper.cpp's token timestamps off: segments get no Words and the
	// renderers share each segment's time out by characters.
	NoWords bool
}

// Engine transcribes with whisper.cpp. It implements providers.Transcriber and is safe for
// concurrent use; requests take turns on the model (see cgo_whisper.go).
type Engine struct {
	model    model
	threads  int
	media    *media.Runner
	vad      string
	vadModel string
	words    bool
	// modelPath is read for its header (is the model multilingual?).
	modelPath string
}

var _ providers.Transcriber = (*Engine)(nil)

// model is the recognizer behind the Engine: whisper.cpp with the `whisper` tag, a stub that
// is never available without it, a fake in tests.
type model interface {
	// available reports nil when the model can be used, or an error wrapping
	// providers.ErrUnavailable that says why not.
	available() error
	// transcribe recognizes mono PCMRate samples. progress gets 0–100 as the model works.
	// It returns the segments (with their tokens when o.words) and the language the model
	// used or detected (its code, "en").
	transcribe(ctx context.Context, samples []float32, o options, progress func(int)) ([]segment, string, error)
	// speech returns the stretches of speech whisper.cpp's Silero VAD finds in samples, in
	// order, using the VAD model at vadModel.
	speech(ctx context.Context, samples []float32, vadModel string) ([]span, error)
	io.Closer
}

// options are one transcription's settings.
type options struct {
	lang      string // ISO-639-1 hint, "" to detect
	threads   int
	translate bool // whisper's translate task: English text whatever the speech
	words     bool // token timestamps
	// prompt is whisper's initial prompt ("" for none); temperature its sampling
	// temperature (0: whisper.cpp's default).
	prompt      string
	temperature float64
	// partial, when set, is called with each segment's text as whisper.cpp decodes it
	// (providers.TranscribeRequest.Partial).
	partial func(text string)
}

// segment is a piece of the model's output before words are made from its tokens.
type segment struct {
	Start, End time.Duration
	Text       string
	Tokens     []token
}

// New returns the engine for cfg. It loads nothing yet: the model is read on the first
// transcription, so the app starts fast and Available stays cheap.
func New(cfg Config) *Engine {
	return newEngine(cfg, newModel(cfg.Model))
}

func newEngine(cfg Config, m model) *Engine {
	if cfg.Threads <= 0 {
		cfg.Threads = runtime.NumCPU()
	}
	if cfg.Media == nil {
		cfg.Media = media.New(media.Config{})
	}
	if cfg.VAD == "" {
		cfg.VAD = VADModes[0]
	}
	return &Engine{model: m, threads: cfg.Threads, media: cfg.Media, vad: cfg.VAD,
		vadModel: cfg.VADModel, words: !cfg.NoWords, modelPath: cfg.Model}
}

// Available reports nil when the engine can take orders: compiled in, model file readable,
// ffmpeg present. Otherwise the error wraps providers.ErrUnavailable.
func (e *Engine) Available() error {
	if err := e.model.available(); err != nil {
		return err
	}
	switch e.vad {
	case VADAuto, VADSilence, VADOff:
	case VADSilero:
		if e.vadModel == "" {
			return fmt.Errorf("%w: whisper: VAD %s needs the Silero VAD model (set WHISPER_VAD_MODEL, or WHISPER_VAD=%s)",
				providers.ErrUnavailable, VADSilero, VADSilence)
		}
		if err := checkModelFile(e.vadModel); err != nil {
			return fmt.Errorf("%w (the Silero VAD model, WHISPER_VAD_MODEL)", err)
		}
	default:
		return fmt.Errorf("%w: whisper: unknown VAD mode %q (want one of %v)", providers.ErrUnavailable, e.vad, VADModes)
	}
	if err := e.media.Check(); err != nil {
		return fmt.Errorf("%w: whisper: %v", providers.ErrUnavailable, err)
	}
	return nil
}

// Close frees the model. The engine must not be used afterwards.
func (e *Engine) Close() error {
	return e.model.Close()
}

// decodeShare is the part of the progress bar that decoding fills: ffmpeg decodes ten
// minutes of audio in under a second, the model takes far longer.
const decodeShare = 10

// Transcribe decodes req.Path, finds its speech (VAD), runs the model on the speech alone
// and returns the timed transcript on the original audio's clock.
func (e *Engine) Transcribe(ctx context.Context, req providers.TranscribeRequest) (providers.Transcript, error) {
	if err := e.Available(); err != nil {
		return providers.Transcript{}, err
	}
	if req.Translate {
		if err := e.Translates(); err != nil {
			return providers.Transcript{}, err
		}
	}
	p := &progress{report: req.Report}
	p.set(0)
	samples, err := e.media.DecodePCM(ctx, req.Path, req.Duration, media.EngineLimit(req.Duration))
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("whisper: %w", err)
	}
	p.set(decodeShare)
	// The model runs in this process, not as a child the gate would stop: a runner whose
	// lease lapsed while ffmpeg decoded starts no model work (and the model asks again
	// before each window, proceed).
	if err := proceed(ctx); err != nil {
		return providers.Transcript{}, fmt.Errorf("whisper: %w", err)
	}
	n := len(samples)
	spans, err := e.speech(ctx, samples)
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("whisper: finding speech: %w", err)
	}
	lang := req.Language
	var segments []providers.Segment
	if len(spans) > 0 { // no speech, nothing to say: the model would only invent text
		speech, clk := splice(samples, spans)
		o := options{lang: req.Language, threads: e.threads, translate: req.Translate, words: e.words,
			prompt: req.Prompt, temperature: req.Temperature, partial: req.Partial}
		raw, detected, err := e.model.transcribe(ctx, padded(speech), o, func(percent int) {
			// The model's 100 is not the end of the job: keep 100 for when the transcript exists.
			p.set(min(decodeShare+percent*(100-decodeShare)/100, 99))
		})
		if err := ctx.Err(); err != nil {
			return providers.Transcript{}, fmt.Errorf("whisper: %w", err)
		}
		if err != nil {
			return providers.Transcript{}, fmt.Errorf("whisper: transcribing %d s of speech in %d s of audio: %w",
				len(speech)/media.PCMRate, n/media.PCMRate, err)
		}
		if detected != "" {
			lang = detected
		}
		segments = make([]providers.Segment, len(raw))
		for i, s := range raw {
			segments[i] = providers.Segment{Start: s.Start, End: s.End, Text: s.Text}
			if e.words {
				segments[i].Words = words(s.Tokens, s.Start, s.End)
			}
		}
		clk.remap(segments)
	}
	if req.Translate {
		lang = "en" // the text is English whatever was spoken, as OpenAI's translations say
	}
	t := result(segments, lang, n)
	t.Translated = req.Translate
	p.set(100)
	return t, nil
}

// proceed is asked before each piece of the model's work (each 30-second window whisper.cpp
// encodes, each minute of audio Silero looks at; cgo_whisper.go): nil to go on, else why
// to stop: the job ended, or its process gate refused (media.ProcessGate: a runner that
// may have lost its order starts nothing more).
func proceed(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return media.ProcessGate(ctx)
}

// vadMode is the VAD the next job uses: VADAuto resolved by whether the Silero model is there.
func (e *Engine) vadMode() string {
	if e.vad != VADAuto {
		return e.vad
	}
	if e.vadModel != "" && checkModelFile(e.vadModel) == nil {
		return VADSilero
	}
	return VADSilence
}

// speech returns the stretches of samples to transcribe, by the engine's VAD mode.
func (e *Engine) speech(ctx context.Context, samples []float32) ([]span, error) {
	switch e.vadMode() {
	case VADOff:
		return []span{{0, len(samples)}}, nil
	case VADSilero:
		spans, err := e.model.speech(ctx, samples, e.vadModel)
		if err != nil {
			return nil, err
		}
		// Silero's stretches come with 30 ms of padding; as much as the silence rule keeps
		// spares a word's edges.
		return padSpans(spans, defaultSilence.pad, len(samples)), nil
	default:
		return defaultSilence.speechSpans(samples), nil
	}
}

// ErrEnglishOnly is returned (wrapped) for a translation asked of an English-only model
// (*.en), which has no translate task.
var ErrEnglishOnly = errors.New("the whisper model is English-only and cannot translate")

// Translates reports nil when the model can translate speech into English, or why not:
// ErrEnglishOnly, or what Available says. It reads the model file's header, not the weights.
func (e *Engine) Translates() error {
	if err := e.Available(); err != nil {
		return err
	}
	multi, err := multilingual(e.modelPath)
	if err != nil {
		return fmt.Errorf("%w: whisper: %v", providers.ErrUnavailable, err)
	}
	if !multi {
		return fmt.Errorf("whisper: %s: %w", e.modelPath, ErrEnglishOnly)
	}
	return nil
}

// result builds the transcript from the model's segments over n samples of audio: the text
// joined from the segments, the language by name as OpenAI gives it ("english"), and times
// kept within the audio (whisper's last segment may run to the end of its 30-second window).
func result(segments []providers.Segment, lang string, n int) providers.Transcript {
	duration := time.Duration(n) * time.Second / media.PCMRate
	segs := make([]providers.Segment, 0, len(segments))
	for _, s := range segments {
		s.Start = min(s.Start, duration)
		s.End = min(s.End, duration)
		for i := range s.Words {
			s.Words[i].Start = min(s.Words[i].Start, duration)
			s.Words[i].End = min(s.Words[i].End, duration)
		}
		segs = append(segs, s)
	}
	return providers.Transcript{
		Language: transcript.LanguageName(lang),
		Duration: duration,
		Text:     transcript.Join(segs),
		Segments: segs,
	}
}

// minSamples is the shortest input whisper.cpp transcribes: it returns nothing for less than
// a second ("input is too short"). A little more, so rounding never lands below.
const minSamples = media.PCMRate + media.PCMRate/10

// padded returns samples followed by silence up to minSamples, so a one-word clip is
// still transcribed.
func padded(samples []float32) []float32 {
	if len(samples) >= minSamples {
		return samples
	}
	return append(samples, make([]float32, minSamples-len(samples))...)
}

// progress passes on percentages that only go up, whichever goroutine reports them.
type progress struct {
	mu     sync.Mutex
	last   int
	sent   bool
	report func(int)
}

func (p *progress) set(percent int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sent && percent <= p.last {
		return
	}
	p.last, p.sent = percent, true
	p.report(percent)
}

// ggmlMagic starts every ggml model file ("ggml" as a little-endian uint32).
const ggmlMagic = "lmgg"

// multilingual reports whether the ggml whisper model at path speaks more than English: its
// header's vocabulary size (the first number after the magic) is 51864 for the English-only
// models and 51865 or more for the others (whisper.cpp's own test).
func multilingual(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var head [8]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return false, fmt.Errorf("model %s: reading its header: %v", path, err)
	}
	if string(head[:4]) != ggmlMagic {
		return false, fmt.Errorf("model %s is not a ggml whisper model", path)
	}
	return binary.LittleEndian.Uint32(head[4:]) >= 51865, nil
}

// ErrNotBuilt is wrapped by Available in a binary built without the `whisper` tag, so that main
// can tell the operator the command that builds it (a missing model file wraps fs.ErrNotExist).
var ErrNotBuilt = errors.New("built without whisper (rebuild with -tags whisper and libwhisper)")

// checkModelFile reports, wrapping providers.ErrUnavailable, why path cannot be a whisper
// model: not configured, missing, unreadable, a directory or not a ggml file. It reads four
// bytes; loading the weights is left to the first transcription.
func checkModelFile(path string) error {
	if path == "" {
		return fmt.Errorf("%w: whisper: no model configured (set WHISPER_MODEL)", providers.ErrUnavailable)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: whisper: model %s: %w", providers.ErrUnavailable, path, err)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("file too short")
		}
		return fmt.Errorf("%w: whisper: model %s: %v", providers.ErrUnavailable, path, err)
	}
	if string(magic[:]) != ggmlMagic {
		return fmt.Errorf("%w: whisper: model %s is not a ggml whisper model", providers.ErrUnavailable, path)
	}
	return nil
}
