// Package links reads visitors' video links: the address guard that keeps them off
// loopback, private and metadata addresses, the loopback relay through which ffprobe and
// ffmpeg read them, direct-link analysis and YouTube. ffmpeg arguments come from package media.
package links

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Errors a video link can fail with. They are wrapped with detail; callers test them with
// errors.Is and map them to the visitor's error codes.
var (
	// ErrUnsupportedLink: not an http(s) URL, or a site we do not read.
	ErrUnsupportedLink = errors.New("unsupported link")
	// ErrForbiddenAddress: the link (or a redirect, or a DNS answer) points at a loopback,
	// private, link-local, multicast, unspecified or cloud-metadata address.
	ErrForbiddenAddress = errors.New("address not allowed")
	// ErrNotMedia: the link answered, but with no audio we can read.
	ErrNotMedia = errors.New("not a media file with audio")
	// ErrLiveStream: live streams have no duration to price.
	ErrLiveStream = errors.New("live stream")
	// ErrVideoUnavailable: the video is private, age-gated, removed or otherwise refused.
	ErrVideoUnavailable = errors.New("video unavailable")
	// ErrSourceUnreachable: the source did not answer as it should (timeout, 4xx/5xx,
	// too many redirects, too big).
	ErrSourceUnreachable = errors.New("source unreachable")
	// ErrPlatformUnreachable: the platform itself (YouTube) could not be reached or gave an
	// answer we could not read: our side's trouble, not the visitor's link, which a
	// private or removed video (ErrVideoUnavailable) is. It is an ErrSourceUnreachable too,
	// so fulfilment retries it as any source failure.
	ErrPlatformUnreachable = fmt.Errorf("platform unreachable: %w", ErrSourceUnreachable)
)

// LinkInfo is what analysing a video link found.
type LinkInfo struct {
	// Site is "direct" for a plain http(s) file, or the site's name ("youtube").
	Site string
	// URL is the link as it will be fetched again at fulfilment (normalised).
	URL string
	// ID is the site's own id for the video (YouTube video id); empty for direct links.
	ID string
	// Title when the site tells it.
	Title string
	// Duration of the media.
	Duration time.Duration
	// Speech is how much of the media is speech (media.Measurement.Speech), when
	// SpeechMeasured. Measuring decodes the whole audio, which for a muxed video means
	// reading the whole file: only direct links no bigger than ResolverConfig.SpeechMaxBytes
	// are measured while analysing; site links never are (their analysis reads no media).
	Speech time.Duration
	// SpeechMeasured says whether Speech was measured.
	SpeechMeasured bool
	// Size is the direct link's size in bytes as its host announced it when analysed; 0
	// when it did not (a stream without length) and for site links. After payment, a host
	// without byte ranges is read only as far as the paid length can hold (fetchBound).
	Size int64
}

// Site reads video links of one hosting platform.
type Site interface {
	// Match reports whether raw is a link of this site and returns the video id.
	Match(raw string) (id string, ok bool)
	// Analyze returns the video's duration and title without downloading it.
	Analyze(ctx context.Context, id string) (LinkInfo, error)
	// FetchAudio downloads the audio-only stream of the video to the local file dst.
	FetchAudio(ctx context.Context, id string, dst string) error
}
