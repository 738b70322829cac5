package links

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"parla/media"
)

// ErrTooLong is returned (wrapped, together with the LinkInfo) when a video is longer than
// the operator's ResolverConfig.MaxDuration.
var ErrTooLong = errors.New("video too long")

// SiteDirect is LinkInfo.Site for a plain http(s) media file.
const SiteDirect = "direct"

// maxLinkLength bounds a visitor's link; real video links are far shorter.
const maxLinkLength = 2048

// Defaults for ResolverConfig.
const (
	defaultAnalyzeTimeout = 15 * time.Second
	// A media host answers a request's first byte in well under a second; one that has
	// said nothing after five is not going to be analysed within the fifteen.
	defaultFirstByteTimeout = 5 * time.Second
	// ffprobe reads a few hundred KB of a well-made file; a moov-at-end MP4 on a server
	// without Range support must be read up to its index, which this bounds.
	defaultAnalyzeMaxBytes int64 = 64 << 20
	// Decoding a file's audio to measure its speech reads all of a muxed video; 32 MiB is
	// a few minutes of a phone's video or an hour of audio, read and decoded in a few
	// seconds on a fair connection.
	defaultSpeechMaxBytes int64 = 32 << 20
)

// ResolverConfig wires a Resolver.
type ResolverConfig struct {
	// Guard fetches direct links. Default: NewGuard(GuardConfig{}).
	Guard *Guard
	// Runner runs ffprobe and ffmpeg. Default: media.New(media.Config{}).
	Runner *media.Runner
	// Sites read the links of hosting platforms (YouTube); the first that matches wins.
	Sites []Site
	// MaxDuration refuses longer videos with ErrTooLong; 0 means no limit.
	MaxDuration time.Duration
	// AnalyzeTimeout bounds one Analyze. Default 15 s.
	AnalyzeTimeout time.Duration
	// FirstByteTimeout bounds the wait for a direct link's first byte, and, while the
	// analysis reads it, for the answer to each of its requests: a source that accepts and
	// never answers is refused as unreachable, and never holds a place in the visitors'
	// pool while it is silent. Default 5 s.
	FirstByteTimeout time.Duration
	// AnalyzeMaxBytes bounds what one analysis of a direct link may read. Default 64 MiB.
	AnalyzeMaxBytes int64
	// SpeechMaxBytes: a direct link whose size is known and at most this is decoded whole
	// while analysing, to measure its speech (LinkInfo.Speech). Default 32 MiB; negative
	// turns the measure off.
	SpeechMaxBytes int64
}

// Resolver analyses video links and fetches their audio: site links through their Site,
// anything else as a direct media file read through the Guard's relay.
type Resolver struct {
	cfg ResolverConfig
}

// NewResolver returns a Resolver for cfg, filling in defaults.
func NewResolver(cfg ResolverConfig) *Resolver {
	if cfg.Guard == nil {
		cfg.Guard = NewGuard(GuardConfig{})
	}
	if cfg.Runner == nil {
		cfg.Runner = media.New(media.Config{})
	}
	if cfg.AnalyzeTimeout <= 0 {
		cfg.AnalyzeTimeout = defaultAnalyzeTimeout
	}
	if cfg.FirstByteTimeout <= 0 {
		cfg.FirstByteTimeout = defaultFirstByteTimeout
	}
	if cfg.AnalyzeMaxBytes <= 0 {
		cfg.AnalyzeMaxBytes = defaultAnalyzeMaxBytes
	}
	if cfg.SpeechMaxBytes == 0 {
		cfg.SpeechMaxBytes = defaultSpeechMaxBytes
	}
	return &Resolver{cfg: cfg}
}

// Analyze finds the duration (and title, when the site tells it) of the video at raw
// without downloading it. Errors wrap the link errors of link.go, or ErrTooLong — which
// comes with the LinkInfo, so the caller can say how long the video is.
func (r *Resolver) Analyze(ctx context.Context, raw string) (LinkInfo, error) {
	raw = strings.TrimSpace(raw)
	if err := checkLength(raw); err != nil {
		return LinkInfo{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.AnalyzeTimeout)
	defer cancel()
	var info LinkInfo
	var err error
	if site, id, ok := r.match(raw); ok {
		info, err = site.Analyze(ctx, id)
	} else {
		info, err = r.analyzeDirect(ctx, raw)
	}
	if err != nil {
		return LinkInfo{}, err
	}
	if r.cfg.MaxDuration > 0 && info.Duration > r.cfg.MaxDuration {
		return info, fmt.Errorf("%w: %s is longer than %s", ErrTooLong, info.Duration.Round(time.Second), r.cfg.MaxDuration)
	}
	return info, nil
}

// checkLength refuses an empty link, or one longer than maxLinkLength.
func checkLength(raw string) error {
	if raw == "" || len(raw) > maxLinkLength {
		return fmt.Errorf("%w: empty or longer than %d characters", ErrUnsupportedLink, maxLinkLength)
	}
	return nil
}

// checkLink makes the checks Analyze makes before reading anything — the link's length
// first, then its form — and returns the link normalised: a site's name for the video
// (its place in Sites and the video's id), or the direct link as CheckURL writes it.
func (r *Resolver) checkLink(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if err := checkLength(raw); err != nil {
		return "", err
	}
	for i, s := range r.cfg.Sites {
		if id, ok := s.Match(raw); ok {
			return fmt.Sprintf("site %d: %s", i, id), nil
		}
	}
	u, err := r.cfg.Guard.CheckURL(raw)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// match returns the first site that reads raw.
func (r *Resolver) match(raw string) (Site, string, bool) {
	for _, s := range r.cfg.Sites {
		if id, ok := s.Match(raw); ok {
			return s, id, true
		}
	}
	return nil, "", false
}

// analyzeDirect runs ffprobe on the relayed link, once the source has sent its first byte.
func (r *Resolver) analyzeDirect(ctx context.Context, raw string) (LinkInfo, error) {
	u, err := r.cfg.Guard.CheckURL(raw)
	if err != nil {
		return LinkInfo{}, err
	}
	if err := r.firstByte(ctx, u); err != nil {
		return LinkInfo{}, err
	}
	rl, err := r.cfg.Guard.relayAnswering(ctx, u, r.cfg.AnalyzeMaxBytes, r.cfg.FirstByteTimeout)
	if err != nil {
		return LinkInfo{}, err
	}
	defer rl.Close()
	// The probe and the decode hold one place in the visitors' pool (visitor.go), taken
	// once the source has shown it answers: the pool is shared with uploads, and a source
	// that is silent must not keep them waiting.
	release, err := r.cfg.Runner.VisitorSlot(ctx)
	if err != nil {
		return LinkInfo{}, err
	}
	defer release()
	var out bytes.Buffer
	err = r.cfg.Runner.FFprobe(ctx, media.RemoteProbeArgs(rl.URL), &out)
	if err != nil {
		return LinkInfo{}, runError("analysing", u, rl, err)
	}
	p, err := media.ParseProbe(out.Bytes())
	switch {
	case errors.Is(err, media.ErrNoAudio):
		return LinkInfo{}, fmt.Errorf("%w: %s has no audio stream", ErrNotMedia, u.Hostname())
	case err != nil:
		return LinkInfo{}, fmt.Errorf("%w: analysing %s: %v", ErrNotMedia, u.Hostname(), err)
	case p.Duration == 0 && rl.Stats.Length() < 0:
		return LinkInfo{}, fmt.Errorf("%w: %s sends a stream with no length or duration", ErrLiveStream, u.Hostname())
	case p.Duration == 0:
		return LinkInfo{}, fmt.Errorf("%w: %s has no duration", ErrNotMedia, u.Hostname())
	}
	info := LinkInfo{Site: SiteDirect, URL: u.String(), Duration: p.Duration, Size: max(rl.Stats.Length(), 0)}
	if size := rl.Stats.Length(); size >= 0 && size <= r.cfg.SpeechMaxBytes && !r.tooLong(info.Duration) {
		if err := r.measureBounded(ctx, u, size, &info); err != nil {
			return LinkInfo{}, err
		}
	}
	return info, nil
}

// firstByte asks the source for its first byte, within FirstByteTimeout: a link whose
// host accepts and never answers (or answers an error) is refused before the analysis
// waits for a place in the visitors' pool. The byte read is a ranged request's one byte,
// or the first of a host's whole file when it ignores ranges (the rest is not read).
func (r *Resolver) firstByte(ctx context.Context, u *url.URL) error {
	wait, cancel := context.WithTimeout(ctx, r.cfg.FirstByteTimeout)
	defer cancel()
	silent := func(err error) error {
		if ctx.Err() == nil && errors.Is(wait.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: %s sent nothing within %s", ErrSourceUnreachable, u.Hostname(), r.cfg.FirstByteTimeout)
		}
		return sourceFailure(u, err)
	}
	req, err := http.NewRequestWithContext(wait, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupportedLink, err)
	}
	req.Header.Set("Range", "bytes=0-0")
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := r.cfg.Guard.Client().Do(req)
	if err != nil {
		return silent(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		return fmt.Errorf("%w: %s answered %s", ErrSourceUnreachable, u.Hostname(), resp.Status)
	}
	if _, err := resp.Body.Read(make([]byte, 1)); err != nil && err != io.EOF {
		return silent(err)
	}
	return nil
}

// runError explains a failed ffmpeg/ffprobe run on a relayed link: the source's own failure
// first, then a timeout, then the tool's complaint (the file is not media we can read).
// The relay URL is scrubbed from the message: it names a token, not the source.
func runError(doing string, u *url.URL, rl *Relayed, err error) error {
	host := u.Hostname()
	if srcErr := rl.Stats.Err(); srcErr != nil {
		return fmt.Errorf("%s %s: %w", doing, host, srcErr)
	}
	if errors.Is(err, media.ErrMissingTool) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s %s: timed out", ErrSourceUnreachable, doing, host)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s %s: %w", doing, host, err)
	}
	msg := strings.ReplaceAll(err.Error(), rl.URL, host)
	return fmt.Errorf("%w: %s %s: %s", ErrNotMedia, doing, host, msg)
}

// FetchAudio writes the audio of an analysed link to the local file dst. Site links go
// through their Site; direct links through the relay, bounded by GuardConfig.MaxBytes.
// A direct link's audio is copied, not re-encoded, into Matroska (see media.FetchAudioArgs).
// A fetch is engine work: it starts only when the process gate lets it (media.ProcessGate:
// a runner that may have lost its order fetches nothing), and one that fails while the gate
// closed returns the gate's error, not a fault of the source (ffmpeg refused to start: the
// link is no less media for that).
func (r *Resolver) FetchAudio(ctx context.Context, info LinkInfo, dst string) error {
	if err := media.ProcessGate(ctx); err != nil {
		return err
	}
	err := r.fetch(ctx, info, dst)
	if err != nil {
		if gate := media.ProcessGate(ctx); gate != nil {
			return gate
		}
	}
	return err
}

// fetch is FetchAudio's work.
func (r *Resolver) fetch(ctx context.Context, info LinkInfo, dst string) error {
	if info.Site != SiteDirect {
		site, id, ok := r.siteFor(info)
		if !ok {
			return fmt.Errorf("%w: no reader for site %q", ErrUnsupportedLink, info.Site)
		}
		return site.FetchAudio(ctx, id, dst)
	}
	u, err := r.cfg.Guard.CheckURL(info.URL)
	if err != nil {
		return err
	}
	ranged, err := r.servesRanges(ctx, u)
	if err != nil {
		return err
	}
	if !ranged {
		return r.fetchWhole(ctx, u, info, dst)
	}
	rl, err := r.cfg.Guard.Relay(ctx, u, 0)
	if err != nil {
		return err
	}
	defer rl.Close()
	if err := r.cfg.Runner.FFmpeg(ctx, media.FetchAudioArgs(rl.URL, dst), nil, nil); err != nil {
		return runError("fetching audio from", u, rl, err)
	}
	if srcErr := rl.Stats.Err(); srcErr != nil {
		return r.trustFetched(ctx, fmt.Errorf("fetching audio from %s: %w", u.Hostname(), srcErr), info, dst)
	}
	return nil
}

// servesRanges asks the source for its first byte: a host that answers 206 serves byte
// ranges, and ffmpeg may read it through the relay, seeking as it likes.
func (r *Resolver) servesRanges(ctx context.Context, u *url.URL) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrUnsupportedLink, err)
	}
	req.Header.Set("Range", "bytes=0-0")
	resp, err := r.cfg.Guard.Client().Do(req)
	if err != nil {
		return false, sourceFailure(u, err)
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent:
		return true, nil
	case resp.StatusCode == http.StatusOK:
		return false, nil
	}
	return false, fmt.Errorf("%w: %s answered %s", ErrSourceUnreachable, u.Hostname(), resp.Status)
}

// fetchWhole downloads a video from a host without byte ranges to scratch space next to
// dst (at most what its paid length can hold, fetchBound: all of it or an error — a file
// bigger than that is refused with ErrTooLong before anything is decoded), then copies its audio out
// locally. Through the relay, ffmpeg's seeks on such a host (an MP4 indexed at its end)
// would restart the transfer and write a broken file.
func (r *Resolver) fetchWhole(ctx context.Context, u *url.URL, info LinkInfo, dst string) error {
	src := dst + ".source"
	defer os.Remove(src)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupportedLink, err)
	}
	resp, err := r.cfg.Guard.StreamClient().Do(req)
	if err != nil {
		return sourceFailure(u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s answered %s", ErrSourceUnreachable, u.Hostname(), resp.Status)
	}
	f, err := os.Create(src)
	if err != nil {
		return fmt.Errorf("downloading from %s: %w", u.Hostname(), err)
	}
	limit, paidFor := fetchBound(info, r.cfg.Guard.cfg.MaxBytes)
	n, err := io.Copy(f, io.LimitReader(resp.Body, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var cut error // the transfer ended early: the audio is kept only if it is all there
	switch {
	case n > limit && paidFor:
		return fmt.Errorf("%w: %s sends more than the %d bytes its paid %s can hold", ErrTooLong, u.Hostname(),
			limit, info.Duration.Round(time.Second))
	case n > limit:
		return fmt.Errorf("%w: %s sends more than %d bytes", ErrSourceUnreachable, u.Hostname(), limit)
	case errors.Is(err, io.ErrUnexpectedEOF):
		cut = fmt.Errorf("%w: %s hung up after %d bytes", ErrSourceUnreachable, u.Hostname(), n)
	case err != nil:
		return sourceFailure(u, err)
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		cut = fmt.Errorf("%w: %s sent %d of the %d bytes it announced", ErrSourceUnreachable, u.Hostname(), n, resp.ContentLength)
	}
	if err := r.cfg.Runner.FFmpeg(ctx, media.ExtractAudioArgs(src, dst), nil, nil); err != nil {
		if cut != nil {
			return cut
		}
		if ctx.Err() != nil || errors.Is(err, media.ErrMissingTool) {
			return err
		}
		return fmt.Errorf("%w: copying the audio of %s: %v", ErrNotMedia, u.Hostname(), err)
	}
	return r.trustFetched(ctx, cut, info, dst)
}

// Bounds on what a host without byte ranges may send after payment, before the paid
// length is checked: the analysed file's own rate with room to spare, or, when its size
// was not announced, a rate no video a visitor could mean to transcribe reaches.
const (
	fetchRateFactor = 2
	// fetchMaxRate is 64 Mbit/s, a 4K video's.
	fetchMaxRate = 8 << 20
	fetchSlack   = 1 << 20
)

// fetchBound is how many bytes of a whole file (a host without byte ranges) are read
// after payment: what the paid length and its margin (media.EngineLimit) can hold at
// twice the rate the analysed size and length give, or at fetchMaxRate when the size is
// unknown, and never more than most (GuardConfig.MaxBytes). paidFor says the bound came
// from the paid length: a file past it is longer than what was paid for, or not that file.
func fetchBound(info LinkInfo, most int64) (limit int64, paidFor bool) {
	if info.Duration <= 0 {
		return most, false
	}
	held := media.EngineLimit(info.Duration).Seconds()
	rate := float64(fetchMaxRate)
	if info.Size > 0 {
		rate = fetchRateFactor * float64(info.Size) / info.Duration.Seconds()
	}
	if b := held*rate + fetchSlack; b < float64(most) {
		return int64(b), true
	}
	return most, false
}

// sourceFailure explains a failed request to the source: the guard's refusals as they are,
// anything else (timeouts, resets, cut transfers) as a source that did not answer, which
// is retried.
func sourceFailure(u *url.URL, err error) error {
	for _, refusal := range []error{ErrForbiddenAddress, ErrUnsupportedLink, ErrSourceUnreachable, context.Canceled} {
		if errors.Is(err, refusal) {
			return fmt.Errorf("reading %s: %w", u.Hostname(), err)
		}
	}
	return fmt.Errorf("%w: reading %s: %v", ErrSourceUnreachable, u.Hostname(), err)
}

// trustFetched decides whether audio ffmpeg finished writing can be used when the source
// misbehaved on the way (srcErr: it hung up, or sent less than it announced): ffmpeg ends
// cleanly at a cut, so only a file of the analysed length is kept. Anything shorter is the
// source's failure, which is retried (srcErr wraps ErrSourceUnreachable), not a changed
// video to refund.
func (r *Resolver) trustFetched(ctx context.Context, srcErr error, info LinkInfo, dst string) error {
	if srcErr == nil {
		return nil
	}
	// After payment: decode no more than the paid length and its margin.
	m, err := r.cfg.Runner.CheckPaid(ctx, dst, info.Duration)
	got := m.Length
	if err == nil && !lengthDiffers(got, info.Duration) {
		return nil
	}
	return srcErr
}

// lengthDiffers reports lengths further apart than encoders' rounding: 2 s, or 2 % of long
// media (the order book refunds a paid video whose length changed by more).
func lengthDiffers(a, b time.Duration) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d > max(2*time.Second, b/50)
}

// siteFor finds the Site that reads a link analysed earlier.
func (r *Resolver) siteFor(info LinkInfo) (Site, string, bool) {
	site, id, ok := r.match(info.URL)
	if !ok {
		return nil, "", false
	}
	if info.ID != "" {
		id = info.ID
	}
	return site, id, true
}
