package links

// The free preview of a link (issue 46): its first seconds' audio as a WAV clip
// (media.PreviewClip), reading no more of the source than those seconds need.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"parla/media"
)

// StartFetcher is a Site that can fetch the start of a video's audio alone, for a preview.
// A site without it has no previews.
type StartFetcher interface {
	// FetchStart writes at least the first length of video id's audio (all of it when the
	// video is shorter), in the stream's own container, to the local file dst. On failure
	// dst is removed.
	FetchStart(ctx context.Context, id, dst string, length time.Duration) error
}

// PreviewClip writes the first length of an analysed link's audio (info from Analyze) to
// dst as media.PreviewClip does, and returns the clip's measurement. It reads only what
// those seconds need: a direct link through a fresh relay, with ranges where the host serves
// them and never more than previewBytes; a site link through its StartFetcher (a site
// without one: ErrUnsupportedLink). It is bounded by ctx and by AnalyzeTimeout: a source
// that hangs or trickles fails within them. Errors are the link errors, as Analyze's are
// (ErrSourceUnreachable for a failing or silent source, ErrNotMedia for audio ffmpeg cannot
// read). The caller holds a visitors' slot (media.Runner.VisitorSlot).
func (r *Resolver) PreviewClip(ctx context.Context, info LinkInfo, dst string, length time.Duration) (media.Measurement, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.AnalyzeTimeout)
	defer cancel()
	if info.Site != SiteDirect {
		return r.previewSite(ctx, info, dst, length)
	}
	u, err := r.cfg.Guard.CheckURL(info.URL)
	if err != nil {
		return media.Measurement{}, err
	}
	rl, err := r.cfg.Guard.relayAnswering(ctx, u, previewBytes(info, length, r.cfg.AnalyzeMaxBytes), r.cfg.FirstByteTimeout)
	if err != nil {
		return media.Measurement{}, err
	}
	defer rl.Close()
	m, err := r.cfg.Runner.PreviewClip(ctx, rl.URL, true, length, dst)
	if err != nil {
		return media.Measurement{}, runError("previewing", u, rl, err)
	}
	// ffmpeg ends cleanly at a cut transfer: a clip the source cut short is its failure.
	if srcErr := rl.Stats.Err(); srcErr != nil && m.Length < length {
		os.Remove(dst)
		return media.Measurement{}, fmt.Errorf("previewing %s: %w", u.Hostname(), srcErr)
	}
	return m, nil
}

// previewSite is PreviewClip for a site's link: the start of its audio fetched next to dst,
// then clipped locally.
func (r *Resolver) previewSite(ctx context.Context, info LinkInfo, dst string, length time.Duration) (media.Measurement, error) {
	site, id, ok := r.siteFor(info)
	if !ok {
		return media.Measurement{}, fmt.Errorf("%w: no reader for site %q", ErrUnsupportedLink, info.Site)
	}
	starts, ok := site.(StartFetcher)
	if !ok {
		return media.Measurement{}, fmt.Errorf("%w: no preview for this site (%s)", ErrUnsupportedLink, info.Site)
	}
	start := dst + ".start"
	defer os.Remove(start)
	if err := starts.FetchStart(ctx, id, start, length); err != nil {
		return media.Measurement{}, err
	}
	m, err := r.cfg.Runner.PreviewClip(ctx, start, false, length, dst)
	if err != nil {
		return media.Measurement{}, clipError(ctx, info, err)
	}
	return m, nil
}

// clipError is what a failed clip of a site's fetched start means: the preview out of time
// (the source's, as runError says it), the visitor gone, or audio we cannot read.
func clipError(ctx context.Context, info LinkInfo, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: previewing %s %s: timed out", ErrSourceUnreachable, info.Site, info.ID)
	case ctx.Err() != nil, errors.Is(err, media.ErrMissingTool):
		return err
	}
	return fmt.Errorf("%w: previewing %s %s: %w", ErrNotMedia, info.Site, info.ID, err)
}

// previewBytes is the most a direct link's preview reads from the source: what length holds
// at the file's own rate (its announced size over its length) with room to spare
// (fetchRateFactor), plus fetchSlack and an allowance for the index of a long file (an MP4's
// grows with its length and is read before the first sample), never more than most. A file
// of unknown size may read most.
func previewBytes(info LinkInfo, length time.Duration, most int64) int64 {
	if info.Size <= 0 || info.Duration <= 0 {
		return most
	}
	rate := float64(info.Size) / info.Duration.Seconds()
	b := fetchRateFactor*rate*length.Seconds() + fetchSlack + previewIndexRate*info.Duration.Seconds()
	return int64(min(b, float64(most)))
}

// previewIndexRate is the index bytes allowed a second of a file's length: an MP4's sample
// tables take some 4 to 12 bytes a frame, about 500 bytes a second of a video with sound.
const previewIndexRate = 1 << 10
