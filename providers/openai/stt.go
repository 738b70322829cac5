package openai

// This file is the speech-to-text engine: its configuration, the request and the mapping of
// answers. stt_upload.go prepares the file to send, stt_chunks.go cuts long recordings and
// merges their transcripts.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	goopenai "github.com/sashabaranov/go-openai"

	"parla/media"
	"parla/providers"
)

// MaxUploadBytes is the largest file OpenAI's transcription endpoint takes in one request.
const MaxUploadBytes = 25 << 20

// DefaultMaxChunk is the longest audio sent in one request by default. whisper-1 only has
// the byte limit, but the gpt-4o transcription models refuse long audio, and shorter
// requests fail and retry cheaper.
const DefaultMaxChunk = 20 * time.Minute

// DefaultTranscriptionModel is TranscriberConfig.Model's default (and OPENAI_STT_MODEL's).
const DefaultTranscriptionModel = goopenai.Whisper1

// TranscriberConfig configures the speech-to-text engine.
type TranscriberConfig struct {
	// APIKey is the bearer token. Without it the engine is unavailable.
	APIKey string
	// BaseURL of the API including the version, as in Config.
	BaseURL string
	// Model is the transcription model. Default DefaultTranscriptionModel. It must answer verbose_json
	// with word timestamps, and serve translations (only whisper-1 does, at OpenAI); or be a
	// diarizing model (gpt-4o-transcribe-diarize), which answers diarized_json: segments with
	// speakers, no word times (stt_diarize.go).
	Model string
	// HTTPClient makes the calls. Default: a client without timeout (the request context
	// bounds each call).
	HTTPClient *http.Client
	// Media probes, re-encodes and cuts the audio. Default media.New(media.Config{}).
	Media *media.Runner
	// TempDir holds the re-encoded file and its chunks while a job runs. Default
	// os.TempDir().
	TempDir string
	// MaxBytes is the largest file sent in one request. Default MaxUploadBytes.
	MaxBytes int64
	// MaxChunk is the longest audio sent in one request. Default DefaultMaxChunk.
	MaxChunk time.Duration
	// Concurrency is how many chunks of one long file are transcribed at once. Default 2.
	Concurrency int
}

// Transcriber implements providers.Transcriber with OpenAI's /audio/transcriptions
// endpoint (word and segment times), and /audio/translations when a request asks for an
// English translation.
type Transcriber struct {
	service
	tempDir     string
	maxBytes    int64
	maxChunk    time.Duration
	concurrency int
}

var _ providers.Transcriber = (*Transcriber)(nil)

// NewTranscriber returns the speech-to-text engine for cfg with defaults filled in.
func NewTranscriber(cfg TranscriberConfig) *Transcriber {
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = MaxUploadBytes
	}
	if cfg.MaxChunk <= 0 {
		cfg.MaxChunk = DefaultMaxChunk
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 2
	}
	return &Transcriber{
		service:     newService(cfg.APIKey, cfg.BaseURL, cfg.HTTPClient, cmp.Or(cfg.Model, DefaultTranscriptionModel), cfg.Media),
		tempDir:     cfg.TempDir,
		maxBytes:    cfg.MaxBytes,
		maxChunk:    cfg.MaxChunk,
		concurrency: cfg.Concurrency,
	}
}

// Available reports an error wrapping providers.ErrUnavailable when no API key is set, or
// when ffmpeg or ffprobe (needed to probe, re-encode and cut) is missing.
func (t *Transcriber) Available() error {
	return t.available("openai transcription")
}

// Transcribe sends the audio of req.Path to the API and returns its timed transcript.
//
// A file in a format the API takes, within MaxBytes and MaxChunk, is sent as it is. Any
// other file (video, another container, too big) is re-encoded into a small mono MP3
// first; if that is still too big or too long, it is cut into chunks that are
// transcribed Concurrency at a time and merged with their timestamps shifted to where
// each chunk starts. Progress counts chunks. Temporary files are gone when it returns.
func (t *Transcriber) Transcribe(ctx context.Context, req providers.TranscribeRequest) (providers.Transcript, error) {
	if err := t.Available(); err != nil {
		return providers.Transcript{}, err
	}
	dir, err := os.MkdirTemp(t.tempDir, "parla-stt-*")
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("openai transcription: %w", err)
	}
	defer os.RemoveAll(dir)
	req.Report(0)

	src, err := t.prepare(ctx, req.Path, req.Duration, dir)
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("openai transcription: %w", err)
	}
	var tr providers.Transcript
	if t.fits(src.size, src.duration) {
		tr, err = t.send(ctx, src.path, src.name, src.duration, req)
	} else {
		tr, err = t.transcribeChunks(ctx, src, dir, req)
	}
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("openai transcription: %w", err)
	}
	req.Report(100)
	return tr, nil
}

// send makes one request for the file at path, named name for the API: a transcription
// with word and segment times, or, when translate is set, a translation into English
// (OpenAI's translations endpoint takes neither a language nor timestamp granularities,
// and answers segments without words). fallback is the duration to assume when the answer
// carries none. The request's language, task, prompt and temperature go with it.
func (t *Transcriber) send(ctx context.Context, path, name string, fallback time.Duration, r providers.TranscribeRequest) (providers.Transcript, error) {
	lang, translate := r.Language, r.Translate
	f, err := os.Open(path)
	if err != nil {
		return providers.Transcript{}, err
	}
	defer f.Close()
	req := goopenai.AudioRequest{
		Model:    t.model,
		FilePath: name, // the name in the form; the bytes come from Reader
		Reader:   f,
		// Always timed segments: every engine returns the same Transcript, and our own
		// renderers produce the format the visitor ordered.
		Format:      goopenai.AudioResponseFormatVerboseJSON,
		Prompt:      r.Prompt,
		Temperature: float32(r.Temperature),
	}
	if translate {
		resp, err := t.client.CreateTranslation(ctx, req)
		if err != nil {
			return providers.Transcript{}, fmt.Errorf("requesting a translation: %w", explain(err))
		}
		tr := toTranscript(resp, english, fallback)
		tr.Language = english // what the text is in, whatever was spoken
		return tr, nil
	}
	req.Language = lang
	if r.Partial != nil && !diarizes(t.model) {
		return t.sendStreamed(ctx, path, name, fallback, r)
	}
	if diarizes(t.model) {
		return t.sendDiarized(ctx, req, fallback)
	}
	// Both granularities: asking for words alone returns no segments.
	req.TimestampGranularities = []goopenai.TranscriptionTimestampGranularity{
		goopenai.TranscriptionTimestampGranularityWord, goopenai.TranscriptionTimestampGranularitySegment,
	}
	resp, err := t.client.CreateTranscription(ctx, req)
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("requesting a transcription: %w", explain(err))
	}
	return toTranscript(resp, lang, fallback), nil
}

// english is how the API names the language of a translation.
const english = "english"

// toTranscript maps a verbose_json answer. Segment texts lose the space Whisper puts in
// front of each; an answer without segments becomes one segment over the whole duration.
// The answer's words (top-level, without punctuation) go to the segments by time: each to
// the last segment that starts at or before its middle, with a leading space unless it
// starts with a script written without spaces, so that they read like the segment.
// Segments whisper's statistics call silence are dropped (see silent).
func toTranscript(resp goopenai.AudioResponse, hint string, fallback time.Duration) providers.Transcript {
	tr := newTranscript(resp.Language, hint, resp.Duration, resp.Text, fallback)
	for _, s := range resp.Segments {
		tr.Segments = append(tr.Segments, providers.Segment{
			Start: fromSeconds(s.Start),
			End:   fromSeconds(s.End),
			Text:  strings.TrimSpace(s.Text),
		})
	}
	tr = wholeIfNone(tr)
	j := 0
	for _, w := range resp.Words {
		text := strings.TrimSpace(w.Word)
		if text == "" || len(tr.Segments) == 0 {
			continue
		}
		word := providers.Word{Start: fromSeconds(w.Start), End: fromSeconds(w.End), Text: text}
		if r, _ := utf8.DecodeRuneInString(text); !unspaced(r) {
			word.Text = " " + text
		}
		mid := word.Start + (word.End-word.Start)/2
		for j+1 < len(tr.Segments) && tr.Segments[j+1].Start <= mid {
			j++
		}
		tr.Segments[j].Words = append(tr.Segments[j].Words, word)
	}
	// Whisper's own rule for silence, on the statistics the answer carries: a segment it
	// thinks is probably no speech and decoded with low confidence is dropped, with its
	// words (after they were placed, so they do not land in a neighbour).
	kept := tr.Segments[:0]
	for i, s := range tr.Segments {
		if i < len(resp.Segments) && silent(resp.Segments[i].NoSpeechProb, resp.Segments[i].AvgLogprob) {
			continue
		}
		kept = append(kept, s)
	}
	if len(kept) != len(tr.Segments) {
		tr.Segments = kept
		tr.Text = joinTexts(kept)
	}
	return tr
}

// newTranscript starts the mapping of an answer: its language or else the hint, its
// duration or else fallback, its text trimmed.
func newTranscript(language, hint string, duration float64, text string, fallback time.Duration) providers.Transcript {
	return providers.Transcript{
		Language: cmp.Or(language, hint),
		Duration: cmp.Or(fromSeconds(duration), fallback),
		Text:     strings.TrimSpace(text),
	}
}

// wholeIfNone gives an answer with text but no segments one segment over the whole duration.
func wholeIfNone(tr providers.Transcript) providers.Transcript {
	if len(tr.Segments) == 0 && tr.Text != "" {
		tr.Segments = []providers.Segment{{Start: 0, End: tr.Duration, Text: tr.Text}}
	}
	return tr
}

// Whisper's thresholds for a segment of silence (openai/whisper transcribe.py: a
// no_speech_prob above no_speech_threshold skips the segment unless its avg_logprob is
// above logprob_threshold).
const (
	noSpeechThreshold = 0.6
	logprobThreshold  = -1.0
)

// silent reports whether a segment's statistics say it is silence.
func silent(noSpeechProb, avgLogprob float64) bool {
	return noSpeechProb > noSpeechThreshold && avgLogprob <= logprobThreshold
}

// joinTexts joins segment texts with spaces, except before a script written without them.
func joinTexts(segs []providers.Segment) string {
	var b strings.Builder
	for _, s := range segs {
		if r, _ := utf8.DecodeRuneInString(s.Text); b.Len() > 0 && !unspaced(r) {
			b.WriteByte(' ')
		}
		b.WriteString(s.Text)
	}
	return b.String()
}

// unspaced reports whether r belongs to a script written without spaces between words.
func unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// fromSeconds converts the API's float seconds, rounded to the microsecond (so 16.704
// stays 16.704 s); nonsense gives 0.
func fromSeconds(s float64) time.Duration {
	if !(s > 0 && s < 1e9) {
		return 0
	}
	return time.Duration(math.Round(s*1e6)) * time.Microsecond
}
