package openai

// This file is the speech-to-text engine.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

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

// TranscriberConfig configures the speech-to-text engine.
type TranscriberConfig struct {
	// APIKey is the bearer token. Without it the engine is unavailable.
	APIKey string
	// BaseURL of the API including the version, as in Config.
	BaseURL string
	// Model is the transcription model. Default "whisper-1". It must answer verbose_json.
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
// endpoint.
type Transcriber struct {
	client      *goopenai.Client
	hasKey      bool
	model       string
	media       *media.Runner
	tempDir     string
	maxBytes    int64
	maxChunk    time.Duration
	concurrency int
}

var _ providers.Transcriber = (*Transcriber)(nil)

// NewTranscriber returns the speech-to-text engine for cfg with defaults filled in.
func NewTranscriber(cfg TranscriberConfig) *Transcriber {
	if cfg.Model == "" {
		cfg.Model = goopenai.Whisper1
	}
	if cfg.Media == nil {
		cfg.Media = media.New(media.Config{})
	}
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
		client:      newClient(cfg.APIKey, cfg.BaseURL, cfg.HTTPClient),
		hasKey:      cfg.APIKey != "",
		model:       cfg.Model,
		media:       cfg.Media,
		tempDir:     cfg.TempDir,
		maxBytes:    cfg.MaxBytes,
		maxChunk:    cfg.MaxChunk,
		concurrency: cfg.Concurrency,
	}
}

// newClient builds the go-openai client for a key, an optional base URL and HTTP client.
func newClient(apiKey, baseURL string, hc *http.Client) *goopenai.Client {
	cc := goopenai.DefaultConfig(apiKey)
	if baseURL != "" {
		cc.BaseURL = strings.TrimRight(baseURL, "/")
	}
	if hc != nil {
		cc.HTTPClient = hc
	}
	return goopenai.NewClientWithConfig(cc)
}

// Available reports an error wrapping providers.ErrUnavailable when no API key is set, or
// when ffmpeg or ffprobe (needed to probe, re-encode and cut) is missing.
func (t *Transcriber) Available() error {
	if !t.hasKey {
		return fmt.Errorf("openai transcription: %w: OPENAI_API_KEY not set", providers.ErrUnavailable)
	}
	if err := t.media.Check(); err != nil {
		return fmt.Errorf("openai transcription: %w: %v", providers.ErrUnavailable, err)
	}
	return nil
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
		tr, err = t.send(ctx, src.path, src.name, src.duration, req.Language)
	} else {
		tr, err = t.transcribeChunks(ctx, src, dir, req)
	}
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("openai transcription: %w", err)
	}
	req.Report(100)
	return tr, nil
}

// upload is a file ready to send, or to cut into chunks.
type upload struct {
	path     string
	name     string // the filename the API sees; its extension names the format
	size     int64
	duration time.Duration // 0 when unknown
}

// fits reports whether a file goes in one request.
func (t *Transcriber) fits(size int64, d time.Duration) bool {
	return size <= t.maxBytes && d <= t.maxChunk
}

// prepare returns the file at path as it is when the API takes it in one request, or
// else re-encoded into dir.
func (t *Transcriber) prepare(ctx context.Context, path string, hint time.Duration, dir string) (upload, error) {
	src, err := t.describe(ctx, path, hint)
	if err != nil {
		return upload{}, err
	}
	if ext, ok := acceptedAs(path, src.info); ok && t.fits(src.size, src.duration) {
		return upload{path: path, name: "audio." + ext, size: src.size, duration: src.duration}, nil
	}
	out := filepath.Join(dir, "audio.mp3")
	if err := t.media.FFmpeg(ctx, media.ReencodeArgs(path, out, media.SpeechBitrate), nil, nil); err != nil {
		return upload{}, fmt.Errorf("re-encoding %s of audio: %w", src.duration, err)
	}
	enc, err := t.describe(ctx, out, src.duration)
	if err != nil {
		return upload{}, fmt.Errorf("re-encoded audio: %w", err)
	}
	// The input's own duration, when known: the MP3 adds encoder padding (~70 ms) that
	// would push a file of exactly MaxChunk into one more chunk.
	d := cmp.Or(src.duration, enc.duration)
	return upload{path: out, name: "audio.mp3", size: enc.size, duration: d}, nil
}

// described is what prepare knows of a file.
type described struct {
	info     media.ProbeInfo
	size     int64
	duration time.Duration
}

// describe probes the file at path; hint stands in for a duration ffprobe cannot tell.
func (t *Transcriber) describe(ctx context.Context, path string, hint time.Duration) (described, error) {
	st, err := os.Stat(path)
	if err != nil {
		return described{}, err
	}
	info, err := t.media.Probe(ctx, path)
	if err != nil {
		return described{}, err
	}
	d := info.Duration
	if d == 0 {
		d = hint
	}
	return described{info: info, size: st.Size(), duration: d}, nil
}

// transcribeChunks cuts src into chunks, transcribes them and merges the results.
func (t *Transcriber) transcribeChunks(ctx context.Context, src upload, dir string, req providers.TranscribeRequest) (providers.Transcript, error) {
	if src.duration == 0 {
		return providers.Transcript{}, fmt.Errorf("%d bytes of audio of unknown duration cannot be cut into chunks", src.size)
	}
	plan := media.PlanChunks(src.duration, src.size, t.maxBytes, t.maxChunk)
	parts := make([]TranscriptPart, len(plan))
	var mu sync.Mutex
	done := 0
	err := forEach(ctx, len(plan), t.concurrency, func(ctx context.Context, i int) error {
		tr, err := t.transcribeChunk(ctx, src.path, dir, plan, i, req.Language)
		if err != nil {
			return fmt.Errorf("chunk %d of %d (from %s): %w", i+1, len(plan), plan[i].Start, err)
		}
		parts[i] = TranscriptPart{Offset: plan[i].Start, Transcript: tr}
		mu.Lock()
		defer mu.Unlock()
		done++
		req.Report(done * 99 / len(plan))
		return nil
	})
	if err != nil {
		return providers.Transcript{}, err
	}
	return MergeTranscripts(parts), nil
}

// transcribeChunk cuts chunk i of plan out of the MP3 at path and transcribes it.
func (t *Transcriber) transcribeChunk(ctx context.Context, path, dir string, plan []media.Chunk, i int, lang string) (providers.Transcript, error) {
	c := plan[i]
	length := c.Length
	if i == len(plan)-1 {
		length = 0 // to the end: a probed duration a little short must not drop the tail
	}
	out := filepath.Join(dir, fmt.Sprintf("chunk-%04d.mp3", i))
	defer os.Remove(out)
	if err := t.media.FFmpeg(ctx, media.ChunkArgs(path, out, c.Start, length), nil, nil); err != nil {
		return providers.Transcript{}, fmt.Errorf("cutting: %w", err)
	}
	st, err := os.Stat(out)
	if err != nil {
		return providers.Transcript{}, err
	}
	if st.Size() > t.maxBytes {
		return providers.Transcript{}, fmt.Errorf("%d bytes, above the %d-byte upload limit", st.Size(), t.maxBytes)
	}
	return t.send(ctx, out, "audio.mp3", c.Length, lang)
}

// forEach runs fn for 0..n-1, at most limit at a time. The first error cancels the
// others and is returned; so is the context's error when it ends first.
func forEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	sem := make(chan struct{}, limit)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() {
					firstErr = err
					cancel()
				})
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// send makes one transcription request for the file at path, named name for the API.
// fallback is the duration to assume when the answer carries none.
func (t *Transcriber) send(ctx context.Context, path, name string, fallback time.Duration, lang string) (providers.Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return providers.Transcript{}, err
	}
	defer f.Close()
	resp, err := t.client.CreateTranscription(ctx, goopenai.AudioRequest{
		Model:    t.model,
		FilePath: name, // the name in the form; the bytes come from Reader
		Reader:   f,
		Language: lang,
		// Always timed segments: every engine returns the same Transcript, and our own
		// renderers produce the format the visitor ordered.
		Format:                 goopenai.AudioResponseFormatVerboseJSON,
		TimestampGranularities: []goopenai.TranscriptionTimestampGranularity{goopenai.TranscriptionTimestampGranularitySegment},
	})
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("requesting a transcription: %w", err)
	}
	return toTranscript(resp, lang, fallback), nil
}

// HTTPStatus returns the HTTP status of a failed API call in err's chain, or 0 when the
// server did not answer (network error, cancelled context).
func HTTPStatus(err error) int {
	var apiErr *goopenai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode
	}
	var reqErr *goopenai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	return 0
}

// toTranscript maps a verbose_json answer. Segment texts lose the space Whisper puts in
// front of each; an answer without segments becomes one segment over the whole duration.
func toTranscript(resp goopenai.AudioResponse, hint string, fallback time.Duration) providers.Transcript {
	tr := providers.Transcript{
		Language: resp.Language,
		Duration: fromSeconds(resp.Duration),
		Text:     strings.TrimSpace(resp.Text),
	}
	if tr.Language == "" {
		tr.Language = hint
	}
	if tr.Duration == 0 {
		tr.Duration = fallback
	}
	for _, s := range resp.Segments {
		tr.Segments = append(tr.Segments, providers.Segment{
			Start: fromSeconds(s.Start),
			End:   fromSeconds(s.End),
			Text:  strings.TrimSpace(s.Text),
		})
	}
	if len(tr.Segments) == 0 && tr.Text != "" {
		tr.Segments = []providers.Segment{{Start: 0, End: tr.Duration, Text: tr.Text}}
	}
	return tr
}

// fromSeconds converts the API's float seconds, rounded to the microsecond (so 16.704
// stays 16.704 s); nonsense gives 0.
func fromSeconds(s float64) time.Duration {
	if !(s > 0 && s < 1e9) {
		return 0
	}
	return time.Duration(math.Round(s*1e6)) * time.Microsecond
}

// acceptedContainers maps each file extension the API takes to the ffprobe format names
// that may stand behind it, and for WebM and Ogg the audio codecs they may carry (ffprobe
// names Matroska and WebM alike, and a Matroska file with AAC is no WebM). The extension
// tells the API how to decode; the container proves that the bytes are what the name says.
var acceptedContainers = []struct {
	ext     string
	formats []string
	codecs  []string // empty: any
}{
	{"mp3", []string{"mp3"}, nil},
	{"mpga", []string{"mp3"}, nil},
	{"mpeg", []string{"mp3", "mpeg"}, nil},
	{"m4a", []string{"mov,mp4,m4a,3gp,3g2,mj2"}, nil},
	{"mp4", []string{"mov,mp4,m4a,3gp,3g2,mj2"}, nil},
	{"wav", []string{"wav"}, nil},
	{"webm", []string{"matroska,webm"}, []string{"opus", "vorbis"}},
	{"ogg", []string{"ogg"}, []string{"opus", "vorbis", "flac"}},
	{"flac", []string{"flac"}, nil},
}

// acceptedAs returns the extension under which the API takes the file at path as it is,
// and whether it does. A file whose extension is accepted must hold the matching
// container; a file without extension (an upload stored under an opaque id) is named
// after its container.
func acceptedAs(path string, info media.ProbeInfo) (string, bool) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, a := range acceptedContainers {
		if (ext == a.ext || ext == "") && slices.Contains(a.formats, info.Container) &&
			(a.codecs == nil || slices.Contains(a.codecs, info.Codec)) {
			return a.ext, true
		}
	}
	return "", false
}

// TranscriptPart is the transcript of one chunk and where the chunk starts in the whole.
type TranscriptPart struct {
	Offset     time.Duration
	Transcript providers.Transcript
}

// MergeTranscripts joins the transcripts of consecutive chunks into one. Segment times are
// shifted by their chunk's offset and kept within the chunk, which ends where its audio
// ends or where the next chunk starts, whichever comes first (a recogniser may stamp past
// its audio, and cut MP3 frames overlap a little), so segments of different chunks never
// overlap. Texts are joined with spaces; the duration runs to the end of the last chunk;
// the language is the first one named.
func MergeTranscripts(parts []TranscriptPart) providers.Transcript {
	var out providers.Transcript
	var texts []string
	for i, p := range parts {
		tr := p.Transcript
		if out.Language == "" {
			out.Language = tr.Language
		}
		if t := strings.TrimSpace(tr.Text); t != "" {
			texts = append(texts, t)
		}
		end := p.Offset + tr.Duration
		if tr.Duration == 0 { // unknown: the segments say how far the chunk goes
			end = p.Offset
			for _, s := range tr.Segments {
				end = max(end, p.Offset+s.End)
			}
		}
		if i+1 < len(parts) {
			end = min(end, parts[i+1].Offset)
		}
		for _, s := range tr.Segments {
			s.Start = min(p.Offset+s.Start, end)
			s.End = min(p.Offset+s.End, end)
			out.Segments = append(out.Segments, s)
		}
		out.Duration = max(out.Duration, p.Offset+tr.Duration, end)
	}
	out.Text = strings.Join(texts, " ")
	return out
}
