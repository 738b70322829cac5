package links

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/kkdai/youtube/v2"
)

// DefaultYouTubeMaxBytes caps an audio download when YouTubeConfig.MaxBytes is not set: about
// 15 hours of YouTube's 160 kbit/s opus, far beyond any video worth transcribing.
const DefaultYouTubeMaxBytes = 1 << 30

// youTubeChunkSize is the size of each ranged request of a download. YouTube throttles
// requests without a range, so the library fetches the stream in pieces. Its default is
// 10 MiB; 4 MiB keeps each piece well inside a per-request client timeout (the guarded
// client's is 30 s) on a slow link. A field on YouTube so tests can exercise many pieces.
const youTubeChunkSize = 4 << 20

// youTubeMaxRoutines caps the ranged requests in flight per download. Each holds its whole
// piece in memory, so this bounds memory (with youTubeChunkSize) as well as connections.
const youTubeMaxRoutines = 4

// minSpeechBitrate is the lowest audio bitrate (bit/s) trusted to keep speech intelligible
// for transcription; YouTube's 48–56 kbit/s opus and AAC streams clear it.
const minSpeechBitrate = 48_000

// youTubeID is the shape of a YouTube video id.
var youTubeID = regexp.MustCompile(`^[A-Za-z0-9_-]{11}$`)

// YouTubeConfig sets up YouTube.
type YouTubeConfig struct {
	// HTTPClient makes every request (metadata, player script, audio). In production the
	// app passes its address-guarded client; nil means http.DefaultClient. The library
	// fetches the visitor id without a context, so a Timeout on this client is the only
	// bound on that one request.
	HTTPClient *http.Client
	// MaxBytes caps the downloaded audio; 0 means DefaultYouTubeMaxBytes.
	MaxBytes int64
}

// YouTube reads YouTube links through github.com/kkdai/youtube/v2. It is safe for
// concurrent use.
type YouTube struct {
	httpClient *http.Client
	maxBytes   int64
	chunkSize  int64
}

var (
	_ Site         = (*YouTube)(nil)
	_ StartFetcher = (*YouTube)(nil)
)

// NewYouTube returns a YouTube site reader for cfg.
func NewYouTube(cfg YouTubeConfig) *YouTube {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultYouTubeMaxBytes
	}
	return &YouTube{httpClient: cfg.HTTPClient, maxBytes: cfg.MaxBytes, chunkSize: youTubeChunkSize}
}

// client returns a fresh library client. The library's Client is not safe for concurrent
// use (it caches the visitor id and the player script without locks) and, after an
// age-restricted answer, switches itself to the embedded-player client for good; a client
// per call keeps one visitor's video from changing how the next one is read.
func (y *YouTube) client() *youtube.Client {
	return &youtube.Client{HTTPClient: y.httpClient, ChunkSize: y.chunkSize, MaxRoutines: youTubeMaxRoutines}
}

// Match reports whether raw is a link to one YouTube video and returns its id. It accepts
// http(s) links on youtube.com (www., m., music. or bare) to /watch?v=ID, /shorts/ID,
// /embed/ID, /live/ID and /v/ID, youtu.be/ID and youtube-nocookie.com/embed/ID, with any
// extra query parameters (t=, si=, list=, feature=). Anything else, including a YouTube
// page without a valid 11-character id (a channel, a playlist, the home page), is not
// matched: the resolver then reports it as an unsupported link rather than fetching it as a
// direct file.
func (y *YouTube) Match(raw string) (string, bool) {
	return matchYouTube(raw)
}

// matchYouTube is Match as a pure function.
func matchYouTube(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" ||
		u.User != nil || u.Port() != "" {
		return "", false
	}
	var id string
	switch strings.ToLower(u.Host) {
	case "youtu.be":
		id = pathID(u.Path, "/")
	case "youtube.com", "www.youtube.com", "m.youtube.com", "music.youtube.com":
		if u.Path == "/watch" {
			id = u.Query().Get("v")
		} else {
			id = pathID(u.Path, "/shorts/", "/embed/", "/live/", "/v/")
		}
	case "youtube-nocookie.com", "www.youtube-nocookie.com":
		id = pathID(u.Path, "/embed/")
	}
	if !youTubeID.MatchString(id) {
		return "", false
	}
	return id, true
}

// pathID returns what follows the first matching prefix of path, without a trailing slash.
func pathID(path string, prefixes ...string) string {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(path, p); ok {
			return strings.TrimSuffix(rest, "/")
		}
	}
	return ""
}

// youTubeWatchURL is the normalised link of video id.
func youTubeWatchURL(id string) string {
	return "https://www.youtube.com/watch?v=" + id
}

// Analyze reads the title and duration of video id from YouTube's player API without
// downloading it. Live and upcoming streams fail with ErrLiveStream; private, age-gated,
// removed or blocked videos with ErrVideoUnavailable; network and protocol failures with
// ErrPlatformUnreachable (an ErrSourceUnreachable).
func (y *YouTube) Analyze(ctx context.Context, id string) (LinkInfo, error) {
	v, err := y.video(ctx, y.client(), id)
	if err != nil {
		return LinkInfo{}, err
	}
	return LinkInfo{Site: "youtube", URL: youTubeWatchURL(id), ID: id, Title: v.Title, Duration: v.Duration}, nil
}

// FetchAudio downloads the audio-only stream of video id (see pickAudioFormat) to the local
// file dst, never a stream with video. On any failure dst is removed.
func (y *YouTube) FetchAudio(ctx context.Context, id string, dst string) error {
	return y.fetch(ctx, id, dst, 0)
}

// FetchStart writes the first bytes of video id's audio-only stream (the one FetchAudio
// fetches) to the local file dst: what its stated bitrate needs for length (startBytes), or
// the whole stream when it is shorter. With the stream's length known the library asks for
// those bytes alone (its ranged pieces stop there); without it, it stops reading there. On
// any failure dst is removed.
func (y *YouTube) FetchStart(ctx context.Context, id, dst string, length time.Duration) error {
	return y.fetch(ctx, id, dst, length)
}

// fetch saves video id's audio-only stream to dst: all of it (length 0), or its start.
func (y *YouTube) fetch(ctx context.Context, id, dst string, length time.Duration) error {
	c := y.client()
	v, err := y.video(ctx, c, id)
	if err != nil {
		return err
	}
	f, err := pickAudioFormat(v.Formats)
	if err != nil {
		return fmt.Errorf("youtube %s: %w", id, err)
	}
	limit := y.maxBytes
	if length > 0 {
		limit = min(limit, startBytes(f.Bitrate, length))
		start := *f
		start.ContentLength = min(f.ContentLength, limit) // 0 (unknown) stays 0
		f = &start
	}
	if f.ContentLength > limit {
		return fmt.Errorf("%w: youtube %s: audio is %d bytes, over the %d-byte limit",
			ErrSourceUnreachable, id, f.ContentLength, limit)
	}
	stream, _, err := c.GetStreamContext(ctx, v, f)
	if err != nil {
		return fmt.Errorf("%w: youtube %s: opening audio stream: %w", ErrPlatformUnreachable, id, err)
	}
	defer stream.Close()
	var src io.Reader = stream
	if length > 0 {
		src = io.LimitReader(stream, limit)
	}
	if err := saveStream(dst, src, limit); err != nil {
		return fmt.Errorf("youtube %s: saving audio itag %d: %w", id, f.ItagNo, err)
	}
	return nil
}

// What the start of an audio stream is read to: the stated bitrate (YouTube's is near the
// stream's peak) with room to spare, and the container's header and index before the first
// audio; a rate a visitor's video never reaches when none is stated.
const (
	startRateFactor     = 2
	startSlack          = 64 << 10
	startUnknownBitrate = 512_000
)

// startBytes is how many bytes of a stream of bitrate bit/s (<= 0: unknown) hold its first
// length.
func startBytes(bitrate int, length time.Duration) int64 {
	if bitrate <= 0 {
		bitrate = startUnknownBitrate
	}
	return int64(startRateFactor*float64(bitrate)/8*length.Seconds()) + startSlack
}

// video fetches the metadata of id and refuses what cannot be priced.
func (y *YouTube) video(ctx context.Context, c *youtube.Client, id string) (*youtube.Video, error) {
	if !youTubeID.MatchString(id) {
		return nil, fmt.Errorf("%w: not a youtube video id: %q", ErrUnsupportedLink, id)
	}
	v, err := c.GetVideoContext(ctx, youTubeWatchURL(id))
	if err != nil {
		return nil, youTubeError(id, v, err)
	}
	// A stream that is live has no length yet ("lengthSeconds": "0"); the library does not
	// expose isLive, and nothing without a duration can be priced anyway.
	if v.Duration <= 0 {
		return nil, fmt.Errorf("%w: youtube %s has no duration (live: %t)", ErrLiveStream, id, v.HLSManifestURL != "")
	}
	return v, nil
}

// youTubeError maps the library's errors onto the link errors. The library's error stays
// in the chain (so do context and address-guard errors).
func youTubeError(id string, v *youtube.Video, err error) error {
	var status *youtube.ErrPlayabiltyStatus
	switch {
	case errors.As(err, &status) && status.Status == "LIVE_STREAM_OFFLINE":
		// An upcoming live stream or premiere.
		return fmt.Errorf("%w: youtube %s: %w", ErrLiveStream, id, err)
	case errors.As(err, &status),
		errors.Is(err, youtube.ErrVideoPrivate),
		errors.Is(err, youtube.ErrLoginRequired),
		errors.Is(err, youtube.ErrNotPlayableInEmbed):
		return fmt.Errorf("%w: youtube %s: %w", ErrVideoUnavailable, id, err)
	case v != nil && v.Title != "":
		// The answer was read and named the video, but offered nothing to download.
		return fmt.Errorf("%w: youtube %s: %w", ErrVideoUnavailable, id, err)
	default:
		// HTTP status, network, timeout, or an answer the library could not read: YouTube's
		// trouble or ours, not the link's.
		return fmt.Errorf("%w: youtube %s: %w", ErrPlatformUnreachable, id, err)
	}
}

// pickAudioFormat chooses the stream to transcribe: audio only (never a muxed or video
// stream), from the default audio track when the video has several languages, the lowest
// bitrate that is still adequate for speech (≥ 48 kbit/s) to keep downloads small, or else
// the best audio there is. Ties go to the lower itag so the choice is stable.
func pickAudioFormat(formats youtube.FormatList) (*youtube.Format, error) {
	audio := audioOnly(formats)
	if len(audio) == 0 {
		return nil, fmt.Errorf("%w: no audio-only stream among %d formats", ErrNotMedia, len(formats))
	}
	var adequate, best *youtube.Format
	for i := range audio {
		f := &audio[i]
		if f.Bitrate >= minSpeechBitrate && (adequate == nil || lessBitrate(f, adequate)) {
			adequate = f
		}
		// The highest bitrate; on a tie the lower itag, as for adequate.
		if best == nil || f.Bitrate > best.Bitrate || (f.Bitrate == best.Bitrate && f.ItagNo < best.ItagNo) {
			best = f
		}
	}
	if adequate != nil {
		return adequate, nil
	}
	return best, nil
}

// audioOnly keeps the formats whose MIME type is audio/*, and of those the default audio
// track's when the video offers dubbed tracks.
func audioOnly(formats youtube.FormatList) youtube.FormatList {
	audio := formats.Select(func(f youtube.Format) bool {
		return strings.HasPrefix(strings.ToLower(f.MimeType), "audio/")
	})
	defaults := audio.Select(func(f youtube.Format) bool {
		return f.AudioTrack == nil || f.AudioTrack.AudioIsDefault
	})
	if len(defaults) > 0 {
		return defaults
	}
	return audio
}

// lessBitrate orders formats by bitrate, then itag.
func lessBitrate(a, b *youtube.Format) bool {
	if a.Bitrate != b.Bitrate {
		return a.Bitrate < b.Bitrate
	}
	return a.ItagNo < b.ItagNo
}

// saveStream copies at most maxBytes of src into a new file dst and syncs it. Reading
// failures and an oversized stream wrap ErrSourceUnreachable; dst is removed on any error.
func saveStream(dst string, src io.Reader, maxBytes int64) (err error) {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", dst, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing %s: %w", dst, cerr)
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	n, err := io.Copy(f, io.LimitReader(sourceReader{src}, maxBytes+1))
	if err != nil {
		return err
	}
	if n > maxBytes {
		return fmt.Errorf("%w: stream is over the %d-byte limit", ErrSourceUnreachable, maxBytes)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dst, err)
	}
	return nil
}

// sourceReader marks read errors as the source's fault, so a failing download and a full
// disk end up as different errors after io.Copy.
type sourceReader struct{ r io.Reader }

func (s sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: reading stream: %w", ErrSourceUnreachable, err)
	}
	return n, err
}
