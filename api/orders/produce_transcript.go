package orders

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"parla/media"
	"parla/media/links"
	"parla/providers"
	"parla/providers/transcript"
)

// AudioChecker reads the real duration of a local media file and how much of it is
// speech, refusing files that are not audio we can transcribe (media.Runner does this with
// ffprobe and ffmpeg). CheckUpload is the bounded measure of a visitor's upload: at most
// longest of audio, and no more than the file's size allows (media.ErrTooLong,
// media.ErrTooDense). CheckPaid measures what is fetched after payment, decoding no more
// than the paid length and its margin (media.EngineLimit of paid).
type AudioChecker interface {
	CheckPaid(ctx context.Context, path string, paid time.Duration) (media.Measurement, error)
	CheckUpload(ctx context.Context, path string, longest time.Duration) (media.Measurement, error)
}

// LinkResolver analyses video links for a client (the key the visitor's address is counted
// under: ClientKey) and fetches their audio (links.Cached).
type LinkResolver interface {
	Analyze(ctx context.Context, client, raw string) (links.LinkInfo, error)
	FetchAudio(ctx context.Context, info links.LinkInfo, dst string) error
}

// transcriptProducer transcribes audio- and video-to-text orders: the upload itself, or
// the video link's audio fetched again (and measured again) after payment.
type transcriptProducer struct {
	engine  providers.Transcriber
	audio   AudioChecker
	links   LinkResolver
	uploads *Uploads
	tempDir string
	// translator, when set, says whether the engine can translate (see Desk.Translates).
	translator providers.TranslationChecker
}

func (p *transcriptProducer) Available() error { return p.engine.Available() }

// fetchedShare is the progress a video order has reached once its audio is fetched.
const fetchedShare = 20

// Produce writes the order's transcript to w in the ordered format.
func (p *transcriptProducer) Produce(ctx context.Context, o Order, w io.Writer, progress func(int)) (FileKind, error) {
	params, err := decodeTranscriptParams(o.Params)
	if err != nil {
		return FileKind{}, err
	}
	ext, contentType, ok := transcript.Info(params.Format)
	if !ok {
		return FileKind{}, fmt.Errorf("unknown transcript format %q", params.Format)
	}
	if params.Translate && p.translator != nil {
		// Checked at checkout too; the engine may have changed since (another model).
		if err := p.translator.Translates(); err != nil {
			return FileKind{}, permanent("translation_unavailable", err)
		}
	}
	path, duration, cleanup, err := p.source(ctx, o, params)
	if err != nil {
		return FileKind{}, err
	}
	defer cleanup()
	start := 0
	if o.Service == VTT {
		start = fetchedShare
		progress(start)
	}
	t, err := p.engine.Transcribe(ctx, providers.TranscribeRequest{
		Path: path, Language: params.Language, Duration: duration, Translate: params.Translate,
		Progress: func(pct int) { progress(start + pct*(95-start)/100) },
	})
	if err != nil {
		return FileKind{}, fmt.Errorf("transcribing: %w", err)
	}
	t.Translated = t.Translated || params.Translate
	out, err := transcript.Render(t, params.Format)
	if err != nil {
		return FileKind{}, err
	}
	if _, err := w.Write(out); err != nil {
		return FileKind{}, fmt.Errorf("writing transcript: %w", err)
	}
	name := "transcript"
	if params.Translate {
		name = "translation" // parla-translation-….srt: the file says what it holds
	}
	return FileKind{Name: name, Ext: strings.TrimPrefix(ext, "."), ContentType: contentType, Transcript: &t, Audio: duration}, nil
}

// source returns the local media file to transcribe and its duration: the upload itself,
// or the video link's audio fetched into scratch space (removed by cleanup).
func (p *transcriptProducer) source(ctx context.Context, o Order, params TranscriptParams) (path string, d time.Duration, cleanup func(), err error) {
	nothing := func() {}
	if o.Service == STT {
		path, d, done, err := p.uploads.file(ctx, params.Upload)
		if errors.Is(err, ErrUploadNotFound) {
			return "", 0, nothing, permanent("upload_missing", err)
		}
		if err != nil {
			return "", 0, nothing, err // the store is away: try again
		}
		return path, d, done, nil
	}
	if params.Link == nil {
		return "", 0, nothing, errors.New("video order without a link")
	}
	// A file of this run's own: another run of the order on this node (a takeover while
	// this one still fetches) must neither write into it nor remove it.
	f, err := os.CreateTemp(p.tempDir, "vtt-"+o.ID+"-*-source")
	if err != nil {
		return "", 0, nothing, fmt.Errorf("creating scratch file: %w", err)
	}
	path = f.Name()
	f.Close()
	cleanup = func() { os.Remove(path) }
	if err := p.links.FetchAudio(ctx, params.Link.info(), path); err != nil {
		cleanup()
		return "", 0, nothing, linkFailure(err)
	}
	paid := time.Duration(params.Seconds) * time.Second
	m, err := p.audio.CheckPaid(ctx, path, paid)
	if err != nil {
		cleanup()
		return "", 0, nothing, permanent("source_changed", err)
	}
	d = paidLength(m.Length, paid)
	if lengthChanged(Seconds(d), params.Seconds) {
		cleanup()
		return "", 0, nothing, permanent("source_changed",
			fmt.Errorf("the video lasted %d s when paid for and %d s now", params.Seconds, Seconds(d)))
	}
	// A video too big (or too far away: YouTube) to measure while analysing is measured
	// now: one with no speech is refunded rather than turned into an empty (or
	// hallucinated) transcript.
	if !m.HasSpeech() {
		cleanup()
		return "", 0, nothing, permanent("no_speech",
			fmt.Errorf("the video's %s hold %s of speech", d.Round(time.Second), m.Speech.Round(time.Millisecond)))
	}
	return path, d, cleanup, nil
}

// Release deletes the uploaded file of an audio order; a video's fetched audio is gone
// already. Failures are logged; the sweeper catches what is left.
func (p *transcriptProducer) Release(ctx context.Context, o Order) {
	if o.Service != STT {
		return
	}
	params, err := decodeTranscriptParams(o.Params)
	if err != nil || params.Upload == "" {
		return
	}
	p.uploads.release(ctx, params.Upload, o.ID)
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
