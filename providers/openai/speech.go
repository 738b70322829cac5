// Package openai reaches the OpenAI API, or any server that speaks it (set BaseURL), through
// github.com/sashabaranov/go-openai: a text-to-speech engine (this file) and a
// speech-to-text engine (stt.go, with stt_upload.go and stt_chunks.go).
package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	goopenai "github.com/sashabaranov/go-openai"

	"parla/media"
	"parla/providers"
	"parla/providers/speechlang"
	"parla/providers/texts"
)

// MaxInputChars is the most characters OpenAI's speech endpoint takes in one call.
const MaxInputChars = 4096

// pcmRate is the sample rate of the speech endpoint's "pcm" answers (signed 16-bit
// little-endian, mono).
const pcmRate = 24000

// DefaultSpeechModel is Config.Model's default (and OPENAI_TTS_MODEL's).
const DefaultSpeechModel = string(goopenai.TTSModel1)

// Config configures the engine.
type Config struct {
	// APIKey is the bearer token. Without it the engine is unavailable.
	APIKey string
	// BaseURL of the API including the version, e.g. "http://localhost:8000/v1" for an
	// OpenAI-compatible server. Default "https://api.openai.com/v1".
	BaseURL string
	// Model is the speech model. Default DefaultSpeechModel.
	Model string
	// HTTPClient makes the calls. Default: a client without timeout (the request context
	// bounds each call).
	HTTPClient *http.Client
	// Media runs ffmpeg to join long texts. Default media.New(media.Config{}); pass the
	// app's shared Runner so its concurrency cap holds.
	Media *media.Runner
	// MaxChars is the chunk size for long texts, at most MaxInputChars. Default
	// MaxInputChars; lower it for a compatible server with a smaller limit.
	MaxChars int
	// Voices names the server's voice for each product voice per language (voices.go:
	// ShippedVoices, ParseVoices). When it names languages, those are the languages the
	// engine speaks, and each paragraph of a text that mixes them goes to the voice of its
	// own. Default: none, the product voices' names go as they are.
	Voices VoiceMap
	// Languages, when set, are the languages the engine speaks (OPENAI_TTS_LANGUAGES),
	// over the voice map's or OpenAI's list.
	Languages []string
	// CallTimeout bounds one call, its answer read whole: a server that hangs fails the
	// attempt (which is retried, then refunded) long before the job's own timeout. Default
	// DefaultCallTimeout.
	CallTimeout time.Duration
}

// DefaultCallTimeout is Config.CallTimeout's default (and OPENAI_TTS_CALL_TIMEOUT's): a
// call of MaxInputChars takes OpenAI about a minute, and Kokoro on a slow CPU a few.
const DefaultCallTimeout = 5 * time.Minute

// Speaker implements providers.Speaker with OpenAI's /audio/speech endpoint.
type Speaker struct {
	service
	maxChars int
	timeout  time.Duration // Config.CallTimeout
	voices   VoiceMap
	langs    []string // Config.Languages
	// detector finds each paragraph's language among the voice map's; nil without one.
	detector *speechlang.Detector
}

var _ providers.Speaker = (*Speaker)(nil)

// NewSpeaker returns the speech engine for cfg with defaults filled in.
func NewSpeaker(cfg Config) *Speaker {
	if cfg.MaxChars <= 0 || cfg.MaxChars > MaxInputChars {
		cfg.MaxChars = MaxInputChars
	}
	s := &Speaker{
		service:  newService(cfg.APIKey, cfg.BaseURL, cfg.HTTPClient, cmp.Or(cfg.Model, DefaultSpeechModel), cfg.Media),
		maxChars: cfg.MaxChars,
		timeout:  cmp.Or(cfg.CallTimeout, DefaultCallTimeout),
		voices:   cfg.Voices,
		langs:    slices.Clone(cfg.Languages),
	}
	if len(cfg.Voices.Languages()) > 0 {
		s.detector = speechlang.New(s.Languages())
	}
	return s
}

// Available reports an error wrapping providers.ErrUnavailable when no API key is set, or
// when ffmpeg (needed for aac and for joining long texts) is missing.
func (s *Speaker) Available() error {
	return s.available("openai speech")
}

// Speak asks the API for speech and writes the file encoded as req.Format to w.
//
// The text is cut into calls (plan): by language when it mixes them and the voice map
// names languages, each with the server's voice for its language, then on sentence
// boundaries into pieces of at most MaxChars. A text that is one call is asked for in the
// ordered format (aac answers, which are ADTS, are remuxed into M4A like every AAC file this
// app delivers). Otherwise each call is asked for as raw 24 kHz PCM, and the samples are
// streamed in order into a single ffmpeg encode: one header, no gaps or clicks at the joins.
// Progress counts calls.
func (s *Speaker) Speak(ctx context.Context, req providers.SpeechRequest, w io.Writer) error {
	if err := req.Check("openai speech"); err != nil {
		return err
	}
	speed := req.Speed
	calls, err := s.plan(req)
	if err != nil {
		return err
	}
	if len(calls) == 1 {
		req.Report(0)
		if err := s.speakOne(ctx, calls[0], req.Format, speed, w); err != nil {
			return err
		}
		req.Report(100)
		return nil
	}

	pieces := media.Pieces{
		Count: len(calls),
		Input: media.PCM(pcmRate, 1),
		Open: func(ctx context.Context, i int) (io.Reader, error) {
			return s.call(ctx, calls[i], string(goopenai.SpeechResponseFormatPcm), speed)
		},
	}
	if err := s.media.EncodePieces(ctx, pieces, media.EncodeOptions{Format: req.Format}, req.Report, w); err != nil {
		return fmt.Errorf("openai speech: joining %d chunks: %w", len(calls), err)
	}
	return nil
}

// speechPart is one request to the speech endpoint: its text and the server's voice.
type speechPart struct {
	Text  string
	Voice string
	// Instructions is the request's style of speech (instructionsFor).
	Instructions string
}

// plan cuts a request's text into the calls the server speaks, in order: by language
// first (each paragraph's, when the text mixes languages and the voice map names some),
// each with the server's voice for the product voice in that language, then on sentence
// boundaries into pieces of at most MaxChars characters.
func (s *Speaker) plan(req providers.SpeechRequest) ([]speechPart, error) {
	lang := texts.LanguageCode(speechlang.Normalize(req.Language), false)
	spans := []speechlang.Span{{Language: lang, Text: req.Text}}
	if s.detector != nil {
		var err error
		if spans, err = s.detector.Spans(req.Text, lang, req.DetectParagraphs); err != nil {
			return nil, fmt.Errorf("openai speech: %w", err)
		}
	}
	var calls []speechPart
	for _, span := range spans {
		voice := s.voices.Resolve(req.Voice, span.Language)
		for _, t := range media.SplitText(span.Text, s.maxChars) {
			if strings.TrimSpace(t) != "" {
				calls = append(calls, speechPart{Text: t, Voice: voice, Instructions: req.Instructions})
			}
		}
	}
	if len(calls) == 0 {
		return nil, errors.New("openai speech: empty text")
	}
	return calls, nil
}

// call makes one /audio/speech request, bounded by the call timeout until its answer is
// closed.
func (s *Speaker) call(ctx context.Context, part speechPart, format string, speed float64) (io.ReadCloser, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.timeout, fmt.Errorf("no whole answer within %s", s.timeout))
	resp, err := s.client.CreateSpeech(ctx, goopenai.CreateSpeechRequest{
		Model:          goopenai.SpeechModel(s.model),
		Input:          part.Text,
		Voice:          goopenai.SpeechVoice(part.Voice),
		ResponseFormat: goopenai.SpeechResponseFormat(format),
		Speed:          speed,
		Instructions:   instructionsFor(s.model, part.Instructions),
	})
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("%w: %w", cause, err)
		}
		cancel()
		return nil, fmt.Errorf("requesting %s speech (%d characters, voice %s): %w", format, utf8.RuneCountInString(part.Text), part.Voice, explain(err))
	}
	return speechAnswer{ReadCloser: resp, ctx: ctx, cancel: cancel}, nil
}

// speechAnswer is a call's body: closing it ends the call's timeout; a read cut by the timeout
// says so.
type speechAnswer struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelFunc
}

func (a speechAnswer) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	if err != nil && err != io.EOF && a.ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("%w: %w", context.Cause(a.ctx), err)
	}
	return n, err
}

func (a speechAnswer) Close() error {
	err := a.ReadCloser.Close()
	a.cancel()
	return err
}

// speakOne handles a text that fits in one call.
func (s *Speaker) speakOne(ctx context.Context, part speechPart, format string, speed float64, w io.Writer) error {
	body, err := s.call(ctx, part, format, speed)
	if err != nil {
		return fmt.Errorf("openai speech: %w", err)
	}
	defer body.Close()
	if format == media.AAC {
		if err := s.media.Encode(ctx, media.ADTS, body, media.EncodeOptions{Format: media.AAC}, w); err != nil {
			return fmt.Errorf("openai speech: remuxing aac: %w", err)
		}
		return nil
	}
	if _, err := io.Copy(w, body); err != nil {
		return fmt.Errorf("openai speech: reading %s answer: %w", format, err)
	}
	return nil
}

// instructionsFor is what a speech call sends as instructions: OpenAI's tts-1 and tts-1-hd
// take none; other models (gpt-4o-mini-tts, a compatible server) get the request's.
func instructionsFor(model, instructions string) string {
	if model == "tts-1" || model == "tts-1-hd" {
		return ""
	}
	return instructions
}
