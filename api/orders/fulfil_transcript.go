package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"parla/media/links"
	"parla/providers"
	"parla/providers/transcript"
)

// permanentError is a fulfilment failure no retry can mend (the source changed, the upload
// is gone): the order is refunded at once, with reason as its client-safe error code.
type permanentError struct {
	reason string
	err    error
}

func (e *permanentError) Error() string { return e.reason + ": " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(reason string, err error) error { return &permanentError{reason, err} }

// transcribe produces an audio- or video-to-text order's transcript into w.
func (b *Book) transcribe(ctx context.Context, o Order, w io.Writer, progress *progressRecorder) (resultKind, error) {
	var p TranscriptParams
	if err := json.Unmarshal(o.Params, &p); err != nil {
		return resultKind{}, fmt.Errorf("decoding parameters: %w", err)
	}
	ext, contentType, ok := transcript.Info(p.Format)
	if !ok {
		return resultKind{}, fmt.Errorf("unknown transcript format %q", p.Format)
	}
	if err := b.deps.Transcriber.Available(); err != nil {
		return resultKind{}, err
	}
	path, duration, cleanup, err := b.sourceAudio(ctx, o, p, progress)
	if err != nil {
		return resultKind{}, err
	}
	defer cleanup()
	start := progress.current()
	t, err := b.deps.Transcriber.Transcribe(ctx, providers.TranscribeRequest{
		Path: path, Language: p.Language, Duration: duration,
		Progress: func(pct int) { progress.set(start + pct*(95-start)/100) },
	})
	if err != nil {
		return resultKind{}, fmt.Errorf("transcribing: %w", err)
	}
	out, err := transcript.Render(t, p.Format)
	if err != nil {
		return resultKind{}, err
	}
	if _, err := w.Write(out); err != nil {
		return resultKind{}, fmt.Errorf("writing transcript: %w", err)
	}
	return resultKind{"transcript", strings.TrimPrefix(ext, "."), contentType}, nil
}

// sourceAudio returns the local media file to transcribe and its duration: the upload
// itself, or the video link's audio fetched into scratch space (removed by cleanup).
func (b *Book) sourceAudio(ctx context.Context, o Order, p TranscriptParams, progress *progressRecorder) (path string, d time.Duration, cleanup func(), err error) {
	nothing := func() {}
	if o.Service == STT {
		u, err := b.store.GetUpload(ctx, p.Upload)
		if err == nil {
			path = b.uploadPath(u.ID)
			_, err = os.Stat(path)
		}
		if err != nil {
			return "", 0, nothing, permanent("upload_missing", err)
		}
		return path, u.Duration, nothing, nil
	}
	if p.Link == nil {
		return "", 0, nothing, errors.New("video order without a link")
	}
	path = filepath.Join(b.cfg.TempDir, "vtt-"+o.ID+"-source")
	cleanup = func() { os.Remove(path) }
	if err := b.deps.Links.FetchAudio(ctx, *p.Link, path); err != nil {
		cleanup()
		return "", 0, nothing, linkFailure(err)
	}
	progress.set(20)
	d, err = b.deps.Audio.CheckAudio(ctx, path)
	if err != nil {
		cleanup()
		return "", 0, nothing, permanent("source_changed", err)
	}
	if changed(Seconds(d), p.Seconds) {
		cleanup()
		return "", 0, nothing, permanent("source_changed",
			fmt.Errorf("the video lasted %d s when paid for and %d s now", p.Seconds, Seconds(d)))
	}
	return path, d, cleanup, nil
}

// changed reports whether a fetched duration differs from the paid one by more than
// encoders' rounding: 2 s, or 2 % of long videos.
func changed(now, paid int64) bool {
	diff := now - paid
	if diff < 0 {
		diff = -diff
	}
	return diff > max(2, paid/50)
}

// linkFailure marks the fetch failures that no retry can mend as permanent; a source
// that does not answer is retried.
func linkFailure(err error) error {
	for _, gone := range []error{links.ErrVideoUnavailable, links.ErrNotMedia, links.ErrLiveStream,
		links.ErrTooLong, links.ErrForbiddenAddress, links.ErrUnsupportedLink} {
		if errors.Is(err, gone) {
			return permanent("source_gone", err)
		}
	}
	return fmt.Errorf("fetching the video's audio: %w", err)
}

// releaseInputs deletes what the visitor gave us once the job has ended: the uploaded
// file. Failures are logged; the sweeper catches what is left.
func (b *Book) releaseInputs(ctx context.Context, o Order) {
	if o.Service != STT {
		return
	}
	var p TranscriptParams
	if err := json.Unmarshal(o.Params, &p); err != nil || p.Upload == "" {
		return
	}
	b.deleteUpload(ctx, p.Upload)
}

func (b *Book) deleteUpload(ctx context.Context, id string) bool {
	if err := os.Remove(b.uploadPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		b.log.Warn("deleting upload", "upload", id, "err", err)
		return false
	}
	if err := b.store.DeleteUpload(ctx, id); err != nil {
		b.log.Warn("forgetting upload", "upload", id, "err", err)
		return false
	}
	return true
}

// sweepUploads deletes uploads older than the cutoff that no paid order holds.
func (b *Book) sweepUploads(ctx context.Context, cutoff time.Time) (int, error) {
	stale, err := b.store.StaleUploads(ctx, cutoff)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, u := range stale {
		if b.deleteUpload(ctx, u.ID) {
			n++
		}
	}
	return n, nil
}
