package orders

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"parla/media"
	"parla/media/links"
)

// TranscriptRequest is a visitor's transcription order as the page sends it: an upload
// (audio-to-text) or a link (video-to-text).
type TranscriptRequest struct {
	Upload         string
	Link           string
	Format         string
	Language       string
	Email          string
	EmailVerify    string
	Locale         string
	Key            string // the page's order key (desk_key.go); "" for none
	Translate      bool   // deliver an English translation instead of a transcript
	ClientAmount   *int64
	ClientCurrency string
}

// Seconds is a duration in whole seconds, rounded up, as the price rules count it.
func Seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// QuoteSeconds prices a duration for a transcription service.
func (d *Desk) QuoteSeconds(svc Service, length time.Duration) int64 {
	return d.cfg.Pricing.Quote(svc, Seconds(length))
}

// IncomingFile creates the scratch file an upload is streamed into. Hand it to
// AcceptUpload, or remove it.
func (d *Desk) IncomingFile() (*os.File, error) { return d.uploads.Incoming() }

// AcceptUpload checks the file streamed to path (see IncomingFile) and keeps it as an
// upload, returning it with its price. The file is consumed either way: kept under the
// upload's id, or deleted when it is refused.
func (d *Desk) AcceptUpload(ctx context.Context, path, fileName string, size int64) (Upload, int64, error) {
	kept := false
	defer func() {
		if !kept {
			os.Remove(path)
		}
	}()
	if size == 0 {
		return Upload{}, 0, bad("empty_file", "the file is empty")
	}
	if d.audio == nil {
		return Upload{}, 0, d.Available(STT)
	}
	longest := d.cfg.STTMaxDuration
	m, err := d.audio.CheckUpload(ctx, path, longest)
	if err == nil && m.Length > longest {
		err = media.ErrTooLong
	}
	if err != nil {
		return Upload{}, 0, d.uploadError(err)
	}
	if !m.HasSpeech() {
		return Upload{}, 0, noSpeech(m.Length)
	}
	u, err := d.uploads.keep(ctx, path, fileName, size, m.Length)
	if err != nil {
		return Upload{}, 0, err
	}
	u.Speech = m.Speech
	kept = true
	d.observer.Observe(Event{Kind: EventUpload, Service: STT, Bytes: size})
	d.log.Info("upload accepted", "upload", uploadRef(u.ID), "bytes", size, "seconds", Seconds(m.Length),
		"speechSeconds", Seconds(m.Speech))
	return u, d.QuoteSeconds(STT, m.Length), nil
}

// noSpeech refuses a file or video with less than media.SpeechFloor of speech in it: the
// visitor would pay for an empty transcript.
func noSpeech(length time.Duration) error {
	return bad("no_speech", "no speech found: the %s of this recording hold less than %s of sound above %s",
		length.Round(time.Second), media.SpeechFloor, media.SilenceThreshold)
}

// uploadError is audioError for an upload's bounded measure.
func (d *Desk) uploadError(err error) error {
	switch {
	case errors.Is(err, media.ErrTooLong):
		return bad("audio_too_long", "the recording is longer than the %s we take", d.cfg.STTMaxDuration)
	case errors.Is(err, media.ErrTooDense):
		return bad("audio_too_dense", "the file unpacks into far more audio than a recording of its size holds")
	}
	return audioError(err)
}

// audioError turns a media check failure into what the visitor is told.
func audioError(err error) error {
	switch {
	case errors.Is(err, media.ErrNoAudio):
		return bad("not_audio", "the file has no audio track")
	case errors.Is(err, media.ErrDurationMismatch):
		return bad("unreadable_audio", "the file is damaged: its header and its content disagree about its length")
	case errors.Is(err, media.ErrUnreadable):
		return bad("unreadable_audio", "the file is not audio we can read")
	}
	return err
}

// CreateSTT validates an audio-to-text order for an upload, prices it from the duration
// the server measured, stores it and opens a checkout for it.
func (d *Desk) CreateSTT(ctx context.Context, req TranscriptRequest) (Checkout, error) {
	format, language, email, locale, err := req.validate()
	if err != nil {
		return Checkout{}, err
	}
	if err := d.Available(STT); err != nil {
		return Checkout{}, err
	}
	if err := d.checkTranslation(req.Translate); err != nil {
		return Checkout{}, err
	}
	unlock, err := d.holdKey(ctx, STT, req.Key)
	if err != nil {
		return Checkout{}, err
	}
	defer unlock()
	u, err := d.uploads.get(ctx, strings.TrimSpace(req.Upload))
	if err != nil {
		return Checkout{}, err
	}
	amount := d.QuoteSeconds(STT, u.Duration)
	if err := d.checkClientPrice(amount, req.ClientAmount, req.ClientCurrency); err != nil {
		return Checkout{}, err
	}
	p := TranscriptParams{Format: format, Language: language, Seconds: Seconds(u.Duration), Upload: u.ID, FileName: u.FileName,
		Translate: req.Translate}
	o, err := d.newOrder(STT, p, email, locale, amount)
	if err != nil {
		return Checkout{}, err
	}
	o.Key = req.Key
	ok, err := d.uploads.claim(ctx, u.ID, o.ID)
	if err != nil {
		return Checkout{}, err
	}
	if !ok {
		return Checkout{}, fmt.Errorf("%w: %s is paid for already", ErrUploadNotFound, uploadRef(u.ID))
	}
	return d.openCheckout(ctx, o, productFor(STT, p.Seconds))
}

// AnalyzeLink reads a video link's duration (and title) and prices it.
func (d *Desk) AnalyzeLink(ctx context.Context, raw string) (links.LinkInfo, int64, error) {
	if err := d.Available(VTT); err != nil {
		return links.LinkInfo{}, 0, err
	}
	if strings.TrimSpace(raw) == "" {
		return links.LinkInfo{}, 0, bad("empty_link", "paste the link of a video")
	}
	info, err := d.links.Analyze(ctx, raw)
	if err != nil {
		return info, 0, err
	}
	if max := d.cfg.VTTMaxDuration; max > 0 && info.Duration > max {
		return info, 0, bad("video_too_long", "the video lasts %s; the longest we take is %s",
			info.Duration.Round(time.Second), max)
	}
	if info.SpeechMeasured && info.Speech < media.SpeechFloor {
		return info, 0, noSpeech(info.Duration)
	}
	return info, d.QuoteSeconds(VTT, info.Duration), nil
}

// CreateVTT analyses the link again (the page's copy may be stale), prices it from that
// analysis, stores the order and opens a checkout for it.
func (d *Desk) CreateVTT(ctx context.Context, req TranscriptRequest) (Checkout, error) {
	format, language, email, locale, err := req.validate()
	if err != nil {
		return Checkout{}, err
	}
	if err := d.checkTranslation(req.Translate); err != nil {
		return Checkout{}, err
	}
	unlock, err := d.holdKey(ctx, VTT, req.Key)
	if err != nil {
		return Checkout{}, err
	}
	defer unlock()
	info, amount, err := d.AnalyzeLink(ctx, req.Link)
	if err != nil {
		return Checkout{}, err
	}
	if err := d.checkClientPrice(amount, req.ClientAmount, req.ClientCurrency); err != nil {
		return Checkout{}, err
	}
	p := TranscriptParams{Format: format, Language: language, Seconds: Seconds(info.Duration), Link: linkParams(info),
		Translate: req.Translate}
	o, err := d.newOrder(VTT, p, email, locale, amount)
	if err != nil {
		return Checkout{}, err
	}
	o.Key = req.Key
	return d.openCheckout(ctx, o, productFor(VTT, p.Seconds))
}
