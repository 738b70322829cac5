// Package speechroute speaks a text with a list of speech engines in order of preference
// (TTS_ENGINE=openai,espeak): each paragraph goes to the first engine that speaks its
// language, and the parts are resampled, matched in loudness and joined into one file.
package speechroute

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"parla/media"
	"parla/providers"
	"parla/providers/speechlang"
	"parla/providers/texts"
)

// Engine is one engine of the list: its name (as TTS_ENGINE says it), the name visitors
// read (Label: "Kokoro", "eSpeak NG"), the engine, and the languages it speaks.
type Engine struct {
	Name      string
	Label     string
	Speaker   providers.Speaker
	Languages []string
}

// Router implements providers.Speaker over a list of engines.
type Router struct {
	engines  []Engine
	detector *speechlang.Detector // the languages of every engine
	media    *media.Runner
	tempDir  string
}

var _ providers.Speaker = (*Router)(nil)

// New returns the router over engines, in order of preference; runner joins the parts,
// whose files wait in tempDir ("" = the system's).
func New(engines []Engine, runner *media.Runner, tempDir string) *Router {
	r := &Router{engines: engines, media: runner, tempDir: tempDir}
	r.detector = speechlang.New(r.Languages())
	return r
}

// The router's optional capabilities (providers.go).
var (
	_ providers.LanguageLister = (*Router)(nil)
	_ providers.EngineNamer    = (*Router)(nil)
	_ providers.SpeakerGroup   = (*Router)(nil)
)

// Languages returns the languages some engine speaks, sorted.
func (r *Router) Languages() []string {
	var all []string
	for _, e := range r.engines {
		all = append(all, e.Languages...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// Speakers are the engines, in order: /readyz asks those that call a server.
func (r *Router) Speakers() []providers.Speaker {
	out := make([]providers.Speaker, len(r.engines))
	for i, e := range r.engines {
		out[i] = e.Speaker
	}
	return out
}

// Available reports nil while some engine can speak, else why none can: a language whose
// first engine is closed goes to the next one that speaks it (Speak).
func (r *Router) Available() error {
	var errs []error
	for _, e := range r.engines {
		err := e.Speaker.Available()
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// EngineFor is the Label of the engine that reads lang now (the first open one that speaks
// it, as Speak chooses), or "" when none does.
func (r *Router) EngineFor(lang string) string { return r.Namer()(lang) }

// Namer returns EngineFor for naming many languages at once (a page's ~110): each engine
// is asked whether it is open at most once, not once a language (espeak-ng's answer looks
// for four programs on the PATH).
func (r *Router) Namer() func(lang string) string {
	asked := make([]bool, len(r.engines))
	open := make([]bool, len(r.engines))
	isOpen := func(i int) bool {
		if !asked[i] {
			asked[i], open[i] = true, r.open(i)
		}
		return open[i]
	}
	return func(lang string) string {
		if i := Choose(r.engines, lang, isOpen); i >= 0 {
			return r.engines[i].Label
		}
		return ""
	}
}

// open reports whether engine i can speak now.
func (r *Router) open(i int) bool { return r.engines[i].Speaker.Available() == nil }

// Choose returns the index of the first engine of engines that speaks lang and is open
// (open(i) reports engine i's Available), or -1.
func Choose(engines []Engine, lang string, open func(i int) bool) int {
	for i, e := range engines {
		if slices.Contains(e.Languages, lang) && open(i) {
			return i
		}
	}
	return -1
}

// part is a run of consecutive spans that one engine speaks.
type part struct {
	engine int
	lang   string // the first span's language
	mixed  bool   // several languages: the engine detects them again
	text   string
}

// plan groups a text's spans into parts by the engine that speaks each.
func plan(engines []Engine, spans []speechlang.Span, open func(i int) bool) ([]part, error) {
	var parts []part
	for _, s := range spans {
		i := Choose(engines, s.Language, open)
		if i < 0 {
			return nil, fmt.Errorf("speech: no open engine speaks %q", s.Language)
		}
		if n := len(parts); n > 0 && parts[n-1].engine == i {
			parts[n-1].text += s.Text
			parts[n-1].mixed = parts[n-1].mixed || parts[n-1].lang != s.Language
			continue
		}
		parts = append(parts, part{engine: i, lang: s.Language, text: s.Text})
	}
	if len(parts) == 0 {
		return nil, errors.New("speech: empty text")
	}
	return parts, nil
}

// Speak speaks each paragraph with the first open engine that speaks its language. A text
// one engine speaks whole goes to it as it is; otherwise each engine's part is spoken to a
// FLAC file, and the parts are decoded to one rate, matched in loudness and encoded into
// one file as req.Format (joinArgs).
func (r *Router) Speak(ctx context.Context, req providers.SpeechRequest, w io.Writer) error {
	if err := req.Check("speech"); err != nil {
		return err
	}
	lang := texts.LanguageCode(speechlang.Normalize(req.Language), false)
	spans, err := r.detector.Spans(req.Text, lang, req.DetectParagraphs)
	if err != nil {
		return fmt.Errorf("speech: %w", err)
	}
	parts, err := plan(r.engines, spans, r.open)
	if err != nil {
		return err
	}
	if len(parts) == 1 {
		return r.engines[parts[0].engine].Speaker.Speak(ctx, r.partRequest(req, parts[0], req.Format, req.Progress), w)
	}
	files, err := r.speakParts(ctx, req, parts)
	defer removeAll(files)
	if err != nil {
		return err
	}
	pieces := media.Pieces{Count: len(files), Input: media.PCM(joinRate, 1),
		Open: func(ctx context.Context, i int) (io.Reader, error) { return os.Open(files[i]) }}
	if err := r.media.EncodePieces(ctx, pieces, media.EncodeOptions{Format: req.Format}, nil, w); err != nil {
		return fmt.Errorf("speech: joining %d parts: %w", len(files), err)
	}
	req.Report(100)
	return nil
}

// partRequest is the request for one part: its text and language, in format.
func (r *Router) partRequest(req providers.SpeechRequest, p part, format string, progress func(int)) providers.SpeechRequest {
	return providers.SpeechRequest{Voice: req.Voice, Text: p.text, Format: format, Speed: req.Speed,
		Language: p.lang, DetectParagraphs: p.mixed, Progress: progress}
}

// speakParts speaks each part and decodes it to raw PCM (speakPCM), in order, returning
// the PCM files; progress counts parts to 95 %.
func (r *Router) speakParts(ctx context.Context, req providers.SpeechRequest, parts []part) ([]string, error) {
	var files []string
	for i, p := range parts {
		e := r.engines[p.engine]
		pcm, err := r.speakPCM(ctx, e.Speaker, r.partRequest(req, p, media.FLAC, nil))
		if err != nil {
			return files, fmt.Errorf("speech: part %d of %d (%s, %s): %w", i+1, len(parts), e.Name, p.lang, err)
		}
		files = append(files, pcm)
		req.Report(95 * (i + 1) / len(parts))
	}
	return files, nil
}

// speakPCM speaks req to a FLAC file and decodes that to raw PCM (joinArgs), returning
// the PCM file. Each ffmpeg run ends before the join's encode starts, so that a join never
// holds one of the media Runner's slots while it waits for another.
func (r *Router) speakPCM(ctx context.Context, s providers.Speaker, req providers.SpeechRequest) (string, error) {
	flac, err := r.tempFile(req.Format, func(f *os.File) error { return s.Speak(ctx, req, f) })
	if err != nil {
		return "", err
	}
	defer os.Remove(flac)
	return r.tempFile("pcm", func(f *os.File) error { return r.media.FFmpeg(ctx, joinArgs(flac), nil, f) })
}

// tempFile creates a temporary file, has write fill it and returns its path; on failure
// the file is removed.
func (r *Router) tempFile(ext string, write func(*os.File) error) (string, error) {
	f, err := os.CreateTemp(r.tempDir, "speech-part-*."+ext)
	if err != nil {
		return "", err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// joinRate is the sample rate parts are joined at: OpenAI's and Kokoro's own.
const joinRate = 24000

// joinArgs decode one part to raw mono PCM at joinRate, matched in loudness
// (media.LoudPCMArgs: the image's ffmpeg is checked against it).
func joinArgs(path string) []string { return media.LoudPCMArgs(path, joinRate) }

func removeAll(files []string) {
	for _, f := range files {
		os.Remove(f)
	}
}
