package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"parla/media"
	"parla/media/links"
	"parla/providers"
	"parla/providers/transcript"
)

// The bounds of a transcription preview (Previews).
const (
	// DefaultPreviewLength is how much of a recording a preview hears (PREVIEW_SECONDS).
	DefaultPreviewLength = 30 * time.Second
	// DefaultPreviewPerHour is how much audio one client may have previewed an hour
	// (PREVIEW_SECONDS_PER_HOUR).
	DefaultPreviewPerHour = 5 * time.Minute
	// previewQueueWait bounds a preview's wait for its turn (after paid work and the
	// previews before it), previewWork its cut and the engine's work once it runs.
	previewQueueWait = 3 * time.Minute
	previewWork      = 90 * time.Second
	// previewQueue bounds the previews waiting on a node; past it, visitors are told to
	// come back (rate_limited, as a full visitors' pool is).
	previewQueue = 64
	// previewKeep is how long an answer is kept for the same question, previewAnswers how
	// many answers at most.
	previewKeep    = time.Hour
	previewAnswers = 4096
	// previewErrorKeep is how long a failure is told to whoever asks again, before the
	// preview is made anew: a failing engine is not asked at every poll.
	previewErrorKeep = 30 * time.Second
	// previewTextRunes bounds the text a preview answers.
	previewTextRunes = 2000
)

// Errors of a preview besides its source's (the upload's and the link's own refusals).
var (
	// ErrPreviewPending: the preview is queued or being made; ask again.
	ErrPreviewPending = errors.New("the preview is being made")
	// ErrPreviewsOff: previews are off here (PREVIEW_ENGINES, PREVIEW_SECONDS=0).
	ErrPreviewsOff = errors.New("previews are off here")
	// ErrPreviewFailed: the engine, or our side, could not make the preview.
	ErrPreviewFailed = errors.New("the preview could not be made")
)

// PreviewConfig sets the free transcription previews.
type PreviewConfig struct {
	// Length is how much of a recording a preview hears; 0 turns previews off.
	Length time.Duration
	// PerHour is how much audio one client may have previewed in an hour; 0: no bound.
	PerHour time.Duration
	// Engine names the engine previews are made with: part of each answer's key.
	Engine string
}

// PreviewAsk is a visitor's question: the first seconds of their upload (STT) or link
// (VTT), heard in Language ("" detects).
type PreviewAsk struct {
	Service  Service
	Upload   string
	Link     string
	Language string
	Client   string // ClientKey of the visitor's address
}

// TranscriptPreview is a preview's answer.
type TranscriptPreview struct {
	Text string
	// Language is the ISO 639-1 code the engine heard, or the one asked for; "" unknown.
	Language string
	// Length is how much of the recording was heard.
	Length time.Duration
	// Speech is false when the heard seconds hold no speech: the engine was not asked.
	Speech bool
}

// clipMaker cuts the first seconds of a local file (media.Runner), in the visitors' pool.
type clipMaker interface {
	PreviewClip(ctx context.Context, input string, remote bool, length time.Duration, dst string) (media.Measurement, error)
	VisitorSlot(ctx context.Context) (func(), error)
}

// linkClipMaker cuts the first seconds of an analysed link (links.Cached).
type linkClipMaker interface {
	PreviewClip(ctx context.Context, info links.LinkInfo, dst string, length time.Duration) (media.Measurement, error)
}

// Previews transcribes the first seconds of a visitor's recording before payment, with
// the engine the order will use, so the visitor sees the words and the language heard.
// Each answer is kept by engine, language and upload (a link: and client), so asking
// again costs nothing; a preview runs after paid work (EngineTurns), one at a time per
// node, its clip cut in the visitors' pool, and each client may have PerHour previewed.
type Previews struct {
	cfg     PreviewConfig
	engine  providers.Transcriber
	turns   *EngineTurns
	budget  *previewBudget
	intake  *Intake
	clips   clipMaker
	links   linkClipMaker
	tempDir string
	log     *slog.Logger
	now     func() time.Time

	// base ends the previews being made at Stop; made counts them.
	base   context.Context
	cancel context.CancelFunc
	made   sync.WaitGroup

	mu      sync.Mutex
	answers map[string]*previewAnswer
	waiting int
}

// previewAnswer is one preview, made or being made.
type previewAnswer struct {
	done   chan struct{}
	result TranscriptPreview
	err    error
	at     time.Time // when it was done
}

// Open reports why previews of svc cannot be made here, or nil when they can.
func (p *Previews) Open(svc Service) error {
	if p == nil || p.cfg.Length <= 0 || p.engine == nil || p.clips == nil || (svc == VTT && p.links == nil) {
		return ErrPreviewsOff
	}
	return p.intake.services.available(svc)
}

// Length is how much of a recording a preview hears; 0 when previews are off.
func (p *Previews) Length() time.Duration {
	if p == nil {
		return 0
	}
	return p.cfg.Length
}

// Preview answers ask: from its first answer when there is one, else by making it. It
// waits up to wait for the answer and returns ErrPreviewPending when it is not ready by
// then; asking again never makes a second one.
func (p *Previews) Preview(ctx context.Context, ask PreviewAsk, wait time.Duration) (TranscriptPreview, error) {
	if err := p.Open(ask.Service); err != nil {
		return TranscriptPreview{}, err
	}
	ask.Language = strings.ToLower(strings.TrimSpace(ask.Language))
	if ask.Language != "" && !slices.Contains(TranscriptLanguages, ask.Language) {
		return TranscriptPreview{}, bad("invalid_language", "unknown spoken language %q", ask.Language)
	}
	key := p.keyOf(ask)
	a := p.found(key)
	if a == nil {
		src, err := p.source(ctx, ask)
		if err != nil {
			return TranscriptPreview{}, err
		}
		if a, err = p.answer(key, ask, src); err != nil {
			return TranscriptPreview{}, err
		}
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-a.done:
		return a.result, a.err
	case <-timer.C:
		return TranscriptPreview{}, ErrPreviewPending
	case <-ctx.Done():
		return TranscriptPreview{}, ctx.Err()
	}
}

// previewSource is what a preview hears: an upload, or an analysed link.
type previewSource struct {
	upload string
	link   links.LinkInfo
	heard  time.Duration // what its preview is counted in the client's budget
}

// keyOf is the key of ask's answer: its service, engine and language, and its upload, or
// its client and link. Another visitor's same link is heard anew: an answer found made
// would tell, by its speed, that someone else previewed it.
func (p *Previews) keyOf(ask PreviewAsk) string {
	parts := []string{string(ask.Service), p.cfg.Engine, ask.Language}
	if ask.Service == VTT {
		return answerKey(append(parts, ask.Client, strings.TrimSpace(ask.Link)))
	}
	return answerKey(append(parts, strings.TrimSpace(ask.Upload)))
}

// found is key's answer when there is one (made, or being made).
func (p *Previews) found(key string) *previewAnswer {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.answers[key]
	if a != nil && a.err != nil && p.now().Sub(a.at) > previewErrorKeep {
		delete(p.answers, key) // a failure is told for a while, then made again
		return nil
	}
	return a
}

// source checks what ask names, refusing it as its upload or analysis was refused.
func (p *Previews) source(ctx context.Context, ask PreviewAsk) (previewSource, error) {
	switch ask.Service {
	case STT:
		u, err := p.intake.uploads.get(ctx, strings.TrimSpace(ask.Upload))
		if err != nil {
			return previewSource{}, err
		}
		// Its length was measured by decoding it: the preview hears no more.
		return previewSource{upload: u.ID, heard: min(p.cfg.Length, u.Duration)}, nil
	case VTT:
		info, _, err := p.intake.AnalyzeLink(ctx, ask.Client, ask.Link)
		if err != nil {
			return previewSource{}, err
		}
		// A link's length may be its header's word: it is counted at the whole preview.
		return previewSource{link: info, heard: p.cfg.Length}, nil
	}
	return previewSource{}, fmt.Errorf("%w: no preview of %s", ErrPreviewsOff, ask.Service)
}

// answerKey joins parts unambiguously.
func answerKey(parts []string) string {
	var b strings.Builder
	for _, s := range parts {
		fmt.Fprintf(&b, "%d:%s;", len(s), s)
	}
	return b.String()
}

// answer finds the answer of key, or starts making it: counted against the client's
// budget, refused when the node's queue is full.
func (p *Previews) answer(key string, ask PreviewAsk, src previewSource) (*previewAnswer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.answers[key]; ok {
		return a, nil
	}
	if p.base.Err() != nil {
		return nil, fmt.Errorf("%w: the node is stopping", ErrPreviewsOff)
	}
	if p.waiting >= previewQueue {
		return nil, fmt.Errorf("%w: %d previews are waiting on this node; try again in a few minutes", ErrPreviewFailed, p.waiting)
	}
	if err := p.budget.take(ask.Client, src.heard); err != nil {
		return nil, err
	}
	p.evict()
	a := &previewAnswer{done: make(chan struct{})}
	p.answers[key] = a
	p.waiting++
	p.made.Add(1)
	go func() {
		defer p.made.Done()
		p.make(a, ask, src)
	}()
	return a, nil
}

// stop ends the previews being made (their clips removed) and waits for them; no other
// is started after it.
func (p *Previews) stop() {
	p.mu.Lock()
	p.cancel()
	p.mu.Unlock()
	p.made.Wait()
}

// make makes a preview and records its answer.
func (p *Previews) make(a *previewAnswer, ask PreviewAsk, src previewSource) {
	ctx, cancel := context.WithTimeout(p.base, previewWork+previewQueueWait+previewWork)
	defer cancel()
	start := p.now()
	result, err := p.hear(ctx, ask, src)
	switch {
	case err == nil:
		p.log.Info("preview made", "service", ask.Service, "seconds", Seconds(result.Length), "speech", result.Speech,
			"took", p.now().Sub(start).Round(time.Millisecond))
	case p.base.Err() != nil:
		p.budget.giveBack(ask.Client, src.heard)
		err = fmt.Errorf("%w: the node is stopping", ErrPreviewsOff)
	case !isRefusal(err):
		p.budget.giveBack(ask.Client, src.heard) // our side failed: the visitor's seconds are theirs
		p.log.Warn("preview failed", "service", ask.Service, "err", err)
		err = fmt.Errorf("%w: %v", ErrPreviewFailed, err)
	}
	p.mu.Lock()
	a.result, a.err, a.at = result, err, p.now()
	p.waiting--
	p.mu.Unlock()
	close(a.done)
}

// isRefusal reports the source's own refusals (an unreadable upload, a link that is not
// media), which the visitor is told as they are.
func isRefusal(err error) bool {
	var ie *InputError
	return errors.As(err, &ie) || errors.Is(err, ErrUploadNotFound) || errors.Is(err, links.ErrNotMedia) ||
		errors.Is(err, links.ErrForbiddenAddress) || errors.Is(err, links.ErrUnsupportedLink) ||
		errors.Is(err, links.ErrVideoUnavailable) || errors.Is(err, links.ErrSourceUnreachable) ||
		errors.Is(err, media.ErrTooDense) || errors.Is(err, media.ErrDurationMismatch)
}

// hear cuts the first seconds of the recording, in the visitors' pool and before the
// engine's turn (a slow source holds no turn), and has the engine transcribe them.
func (p *Previews) hear(ctx context.Context, ask PreviewAsk, src previewSource) (TranscriptPreview, error) {
	f, err := os.CreateTemp(p.tempDir, "preview-*.wav")
	if err != nil {
		return TranscriptPreview{}, fmt.Errorf("creating scratch file: %w", err)
	}
	clip := f.Name()
	f.Close()
	defer os.Remove(clip)
	cutCtx, stop := context.WithTimeout(ctx, previewWork)
	m, err := p.cut(cutCtx, src, clip)
	stop()
	if err != nil {
		return TranscriptPreview{}, err
	}
	out := TranscriptPreview{Language: ask.Language, Length: m.Length}
	if !m.HasSpeech() {
		return out, nil
	}
	t, err := p.transcribe(ctx, providers.TranscribeRequest{Path: clip, Language: ask.Language, Duration: m.Length})
	if err != nil {
		return TranscriptPreview{}, fmt.Errorf("transcribing: %w", err)
	}
	out.Speech = true
	out.Text = clipText(strings.TrimSpace(t.Text), previewTextRunes)
	if code := transcript.LanguageCode(t.Language); code != "" {
		out.Language = code
	}
	return out, nil
}

// transcribe waits for the preview's turn (at most previewQueueWait in all) and has the
// engine transcribe req, in previewWork; a call stopped by paid work waits its turn again.
func (p *Previews) transcribe(ctx context.Context, req providers.TranscribeRequest) (providers.Transcript, error) {
	wait, cancel := context.WithTimeout(ctx, previewQueueWait)
	defer cancel()
	for {
		turn, done, err := p.turns.previewTurn(wait, ctx)
		if err != nil {
			return providers.Transcript{}, fmt.Errorf("waiting for the engine, busy with paid work: %w", err)
		}
		work, stop := context.WithTimeout(turn, previewWork)
		t, err := p.engine.Transcribe(work, req)
		stop()
		again := err != nil && preempted(turn)
		done()
		if !again {
			return t, err
		}
	}
}

// cut writes the first seconds of src to clip, in the visitors' pool; a file that cannot
// be read is refused as its upload would be.
func (p *Previews) cut(ctx context.Context, src previewSource, clip string) (media.Measurement, error) {
	release, err := p.clips.VisitorSlot(ctx)
	if err != nil {
		return media.Measurement{}, err
	}
	defer release()
	if src.upload == "" {
		return p.links.PreviewClip(ctx, src.link, clip, p.cfg.Length)
	}
	path, _, done, err := p.intake.uploads.file(ctx, src.upload)
	if err != nil {
		return media.Measurement{}, err
	}
	defer done()
	m, err := p.clips.PreviewClip(ctx, path, false, p.cfg.Length, clip)
	if err != nil {
		return m, p.intake.uploadError(err)
	}
	return m, nil
}

// clipText cuts s to at most n runes, at a space when one is near the end.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := n
	for i := n; i > n*9/10; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimSpace(string(r[:cut])) + "…"
}

// evict drops the answers older than previewKeep, and the oldest done past
// previewAnswers. The caller holds p.mu.
func (p *Previews) evict() {
	now := p.now()
	var oldest string
	var at time.Time
	for key, a := range p.answers {
		if a.at.IsZero() {
			continue // being made
		}
		if now.Sub(a.at) > previewKeep {
			delete(p.answers, key)
		} else if oldest == "" || a.at.Before(at) {
			oldest, at = key, a.at
		}
	}
	if len(p.answers) >= previewAnswers && oldest != "" {
		delete(p.answers, oldest)
	}
}
