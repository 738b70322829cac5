package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"parla/media"
	"parla/media/links"
)

// Intake takes in what a transcription is ordered for, before there is an order: it
// measures an uploaded file and keeps it, or reads a video link, and prices either from
// what the server measured. The Desk then takes the order (desk_transcript.go).
type Intake struct {
	cfg      Config
	services services
	uploads  *Uploads
	audio    AudioChecker
	links    LinkResolver
	observer Observer
	log      *slog.Logger
}

// services are the producers of the services this node offers, by service.
type services map[Service]Producer

// available reports why svc cannot take orders, or nil when it can.
func (s services) available(svc Service) error {
	p, ok := s[svc]
	if !ok {
		return fmt.Errorf("%w: %s is not configured", ErrServiceUnavailable, svc)
	}
	if err := p.Available(); err != nil {
		return fmt.Errorf("%w: %w", ErrServiceUnavailable, err)
	}
	return nil
}

// QuoteSeconds prices a duration for a transcription service.
func (in *Intake) QuoteSeconds(svc Service, length time.Duration) int64 {
	return in.cfg.Pricing.Quote(svc, Seconds(length))
}

// IncomingFile creates the scratch file an upload is streamed into. Hand it to
// AcceptUpload, or remove it.
func (in *Intake) IncomingFile() (*os.File, error) { return in.uploads.Incoming() }

// UploadAllowed says whether client may send an upload now: it is refused, before its
// bytes are read, once the client's or everyone's unpaid uploads fill their quota. The
// upload is checked again, with its size, when it is kept (AcceptUpload).
func (in *Intake) UploadAllowed(ctx context.Context, client string) error {
	return in.uploads.fits(ctx, client, 1) // any upload has a byte
}

// AcceptUpload checks the file streamed to path (see IncomingFile) and keeps it as an
// upload of client's (the address the quotas count it under), returning it with its price.
// The file is consumed either way: kept under the upload's id, or deleted when it is
// refused.
func (in *Intake) AcceptUpload(ctx context.Context, path, fileName, client string, size int64) (Upload, int64, error) {
	kept := false
	defer func() {
		if !kept {
			os.Remove(path)
		}
	}()
	if size == 0 {
		return Upload{}, 0, bad("empty_file", "the file is empty")
	}
	// A file past the quotas is refused before the measure, which costs far more than the
	// query, and its bytes are counted while it is measured; keep counts them again.
	release, err := in.uploads.hold(ctx, client, size)
	if err != nil {
		return Upload{}, 0, err
	}
	defer release()
	m, err := in.MeasureUpload(ctx, path)
	if err != nil {
		return Upload{}, 0, err
	}
	release()
	u, err := in.uploads.keep(ctx, path, fileName, client, size, m.Length)
	if err != nil {
		return Upload{}, 0, err
	}
	u.Speech = m.Speech
	kept = true
	in.observer.Observe(Event{Kind: EventUpload, Service: STT, Bytes: size})
	in.log.Info("upload accepted", "upload", uploadRef(u.ID), "bytes", size, "seconds", Seconds(m.Length),
		"speechSeconds", Seconds(m.Speech))
	return u, in.QuoteSeconds(STT, m.Length), nil
}

// MeasureUpload is the site's bounded measure of a visitor's file (CheckUpload: at most
// STTMaxDuration, in the visitors' pool), refused as the site refuses it (audio_too_long,
// no_speech, unreadable_audio, …). The API's transcriptions (api/v1) price from it too.
func (in *Intake) MeasureUpload(ctx context.Context, path string) (media.Measurement, error) {
	if in.audio == nil {
		return media.Measurement{}, in.services.available(STT)
	}
	longest := in.cfg.STTMaxDuration
	m, err := in.audio.CheckUpload(ctx, path, longest)
	if err == nil && m.Length > longest {
		err = media.ErrTooLong
	}
	if err != nil {
		return m, in.uploadError(err)
	}
	if !m.HasSpeech() {
		return m, noSpeech(m.Length)
	}
	return m, nil
}

// noSpeech refuses a file or video with less than media.SpeechFloor of speech in it: the
// visitor would pay for an empty transcript.
func noSpeech(length time.Duration) error {
	return bad("no_speech", "no speech found: the %s of this recording hold less than %s of sound above %s",
		length.Round(time.Second), media.SpeechFloor, media.SilenceThreshold)
}

// audioError turns a media check failure into what the visitor is told.
func audioError(err error) error {
	switch {
	case errors.Is(err, media.ErrNoAudio):
		return bad("not_audio", "the file has no audio track")
	case errors.Is(err, media.ErrDurationMismatch):
		return bad("length_mismatch", "the file's header and its content disagree about its length")
	case errors.Is(err, media.ErrUnreadable):
		return bad("unreadable_audio", "the file is not audio we can read")
	}
	return err
}

// AnalyzeLink reads a video link's duration (and title) for client (ClientKey of the
// visitor's address) and prices it.
func (in *Intake) AnalyzeLink(ctx context.Context, client, raw string) (links.LinkInfo, int64, error) {
	if err := in.services.available(VTT); err != nil {
		return links.LinkInfo{}, 0, err
	}
	if strings.TrimSpace(raw) == "" {
		return links.LinkInfo{}, 0, bad("empty_link", "paste the link of a video")
	}
	info, err := in.links.Analyze(ctx, client, raw)
	if err != nil {
		return info, 0, err
	}
	if max := in.cfg.VTTMaxDuration; max > 0 && info.Duration > max {
		return info, 0, bad("video_too_long", "the video lasts %s; the longest we take is %s",
			info.Duration.Round(time.Second), max)
	}
	if info.SpeechMeasured && info.Speech < media.SpeechFloor {
		return info, 0, noSpeech(info.Duration)
	}
	return info, in.QuoteSeconds(VTT, info.Duration), nil
}

// uploadError is audioError for an upload's bounded measure.
func (in *Intake) uploadError(err error) error {
	switch {
	case errors.Is(err, media.ErrTooLong):
		return bad("audio_too_long", "the recording is longer than the %s we take", in.cfg.STTMaxDuration)
	case errors.Is(err, media.ErrTooDense):
		return bad("audio_too_dense", "the file unpacks into far more audio than a recording of its size holds")
	}
	return audioError(err)
}
