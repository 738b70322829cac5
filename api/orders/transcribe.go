package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"parla/media"
	"parla/media/links"
	"parla/providers"
)

// AudioChecker reads the real duration of a local media file, refusing files that are
// not audio we can transcribe (media.Runner does this with ffprobe and ffmpeg).
type AudioChecker interface {
	CheckAudio(ctx context.Context, path string) (time.Duration, error)
}

// LinkResolver analyses video links and fetches their audio (links.Resolver).
type LinkResolver interface {
	Analyze(ctx context.Context, raw string) (links.LinkInfo, error)
	FetchAudio(ctx context.Context, info links.LinkInfo, dst string) error
}

// ErrUploadNotFound is returned (wrapped) for an unknown, swept or already paid upload.
var ErrUploadNotFound = errors.New("upload not found")

// TranscriptLanguages are the ISO 639-1 codes a visitor may name as the spoken language
// (OpenAI's list of 57, which whisper.cpp covers too). Empty means detect.
var TranscriptLanguages = []string{
	"af", "ar", "hy", "az", "be", "bs", "bg", "ca", "zh", "hr", "cs", "da", "nl", "en", "et",
	"fi", "fr", "gl", "de", "el", "he", "hi", "hu", "is", "id", "it", "ja", "kn", "kk", "ko",
	"lv", "lt", "mk", "ms", "mr", "mi", "ne", "no", "fa", "pl", "pt", "ro", "ru", "sr", "sk",
	"sl", "es", "sw", "sv", "tl", "ta", "th", "tr", "uk", "ur", "vi", "cy",
}

// TranscriptParams are the parameters of an audio- or video-to-text order.
type TranscriptParams struct {
	Format   string `json:"format"`
	Language string `json:"language,omitempty"`
	Seconds  int64  `json:"seconds"` // billed duration
	// Audio-to-text: the upload.
	Upload   string `json:"upload,omitempty"`
	FileName string `json:"fileName,omitempty"`
	// Video-to-text: the link as analysed.
	Link *links.LinkInfo `json:"link,omitempty"`
}

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
	ClientAmount   *int64
	ClientCurrency string
}

// validate checks what both transcription services share and returns the cleaned
// format, language, e-mail and locale.
func (r TranscriptRequest) validate() (format, language, email, locale string, err error) {
	format = strings.ToLower(strings.TrimSpace(r.Format))
	if format == "" {
		format = "json"
	}
	if !slices.Contains(providers.TranscriptFormats, format) {
		return "", "", "", "", bad("invalid_format", "format must be one of %s", strings.Join(providers.TranscriptFormats, ", "))
	}
	language = strings.ToLower(strings.TrimSpace(r.Language))
	if language != "" && !slices.Contains(TranscriptLanguages, language) {
		return "", "", "", "", bad("invalid_language", "language must be an ISO 639-1 code of a supported language, or empty to detect it")
	}
	if email, err = ValidateEmail(r.Email, r.EmailVerify); err != nil {
		return "", "", "", "", err
	}
	locale, err = ValidateLocale(r.Locale)
	return format, language, email, locale, err
}

// Seconds is a duration in whole seconds, rounded up, as the price rules count it.
func Seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// QuoteSeconds prices a duration for a transcription service.
func (b *Book) QuoteSeconds(svc Service, d time.Duration) int64 {
	return b.cfg.Pricing.Quote(svc, Seconds(d))
}

func (b *Book) checkClientPrice(amount int64, clientAmount *int64, clientCurrency string) error {
	if clientAmount != nil && (*clientAmount != amount ||
		(clientCurrency != "" && clientCurrency != b.cfg.Pricing.Currency)) {
		return fmt.Errorf("%w: page says %d, server says %d %s",
			ErrPriceMismatch, *clientAmount, amount, b.cfg.Pricing.Currency)
	}
	return nil
}

// IncomingFile creates the scratch file an upload is streamed into. Hand it to
// AcceptUpload, or remove it.
func (b *Book) IncomingFile() (*os.File, error) {
	f, err := os.CreateTemp(b.cfg.TempDir, "upload-*")
	if err != nil {
		return nil, fmt.Errorf("creating upload file: %w", err)
	}
	return f, nil
}

// AcceptUpload checks the file streamed to path (see IncomingFile) and keeps it as an
// upload, returning it with its price. The file is consumed either way: kept under the
// upload's id, or deleted when it is refused.
func (b *Book) AcceptUpload(ctx context.Context, path, fileName string, size int64) (Upload, int64, error) {
	keep := false
	defer func() {
		if !keep {
			os.Remove(path)
		}
	}()
	if size == 0 {
		return Upload{}, 0, bad("empty_file", "the file is empty")
	}
	d, err := b.deps.Audio.CheckAudio(ctx, path)
	if err != nil {
		return Upload{}, 0, audioError(err)
	}
	u := Upload{ID: randomString(18), FileName: displayName(fileName), Size: size, Duration: d, CreatedAt: b.cfg.Now()}
	if err := os.Rename(path, b.uploadPath(u.ID)); err != nil {
		return Upload{}, 0, fmt.Errorf("keeping upload: %w", err)
	}
	keep = true
	if err := b.store.CreateUpload(ctx, u); err != nil {
		os.Remove(b.uploadPath(u.ID))
		return Upload{}, 0, err
	}
	b.log.Info("upload accepted", "upload", u.ID, "bytes", size, "seconds", Seconds(d))
	return u, b.QuoteSeconds(STT, d), nil
}

// audioError turns a media check failure into what the visitor is told.
func audioError(err error) error {
	switch {
	case errors.Is(err, media.ErrNoAudio):
		return bad("not_audio", "the file has no audio track")
	case errors.Is(err, media.ErrDurationMismatch):
		return bad("unreadable_audio", "the file is damaged: its header claims more audio than it holds")
	case errors.Is(err, media.ErrUnreadable):
		return bad("unreadable_audio", "the file is not audio we can read")
	}
	return err
}

func (b *Book) uploadPath(id string) string { return filepath.Join(b.cfg.UploadDir, id) }

// displayName keeps a visitor's file name fit for display: no directories, no control
// characters, at most 200 bytes.
func displayName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if name == "." || name == "/" {
		name = ""
	}
	for len(name) > 200 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// CreateSTT validates an audio-to-text order for an upload, prices it from the duration
// the server measured, stores it and opens a checkout for it.
func (b *Book) CreateSTT(ctx context.Context, req TranscriptRequest) (Checkout, error) {
	format, language, email, locale, err := req.validate()
	if err != nil {
		return Checkout{}, err
	}
	if err := b.Available(STT); err != nil {
		return Checkout{}, err
	}
	u, err := b.store.GetUpload(ctx, strings.TrimSpace(req.Upload))
	if err != nil {
		return Checkout{}, err
	}
	if _, err := os.Stat(b.uploadPath(u.ID)); err != nil {
		return Checkout{}, fmt.Errorf("%w: file of upload %s: %v", ErrUploadNotFound, u.ID, err)
	}
	amount := b.QuoteSeconds(STT, u.Duration)
	if err := b.checkClientPrice(amount, req.ClientAmount, req.ClientCurrency); err != nil {
		return Checkout{}, err
	}
	p := TranscriptParams{Format: format, Language: language, Seconds: Seconds(u.Duration), Upload: u.ID, FileName: u.FileName}
	o, err := b.newOrder(STT, p, email, locale, amount)
	if err != nil {
		return Checkout{}, err
	}
	ok, err := b.store.ClaimUpload(ctx, u.ID, o.ID)
	if err != nil {
		return Checkout{}, err
	}
	if !ok {
		return Checkout{}, fmt.Errorf("%w: upload %s is paid for already", ErrUploadNotFound, u.ID)
	}
	return b.openCheckout(ctx, o, productFor(STT, p.Seconds))
}

// AnalyzeLink reads a video link's duration (and title) and prices it.
func (b *Book) AnalyzeLink(ctx context.Context, raw string) (links.LinkInfo, int64, error) {
	if err := b.Available(VTT); err != nil {
		return links.LinkInfo{}, 0, err
	}
	if strings.TrimSpace(raw) == "" {
		return links.LinkInfo{}, 0, bad("empty_link", "paste the link of a video")
	}
	info, err := b.deps.Links.Analyze(ctx, raw)
	if err != nil {
		return info, 0, err
	}
	if max := b.cfg.VTTMaxDuration; max > 0 && info.Duration > max {
		return info, 0, bad("video_too_long", "the video lasts %s; the longest we take is %s",
			info.Duration.Round(time.Second), max)
	}
	return info, b.QuoteSeconds(VTT, info.Duration), nil
}

// CreateVTT analyses the link again (the page's copy may be stale), prices it from that
// analysis, stores the order and opens a checkout for it.
func (b *Book) CreateVTT(ctx context.Context, req TranscriptRequest) (Checkout, error) {
	format, language, email, locale, err := req.validate()
	if err != nil {
		return Checkout{}, err
	}
	info, amount, err := b.AnalyzeLink(ctx, req.Link)
	if err != nil {
		return Checkout{}, err
	}
	if err := b.checkClientPrice(amount, req.ClientAmount, req.ClientCurrency); err != nil {
		return Checkout{}, err
	}
	p := TranscriptParams{Format: format, Language: language, Seconds: Seconds(info.Duration), Link: &info}
	o, err := b.newOrder(VTT, p, email, locale, amount)
	if err != nil {
		return Checkout{}, err
	}
	return b.openCheckout(ctx, o, productFor(VTT, p.Seconds))
}

// newOrder builds an unpaid order with its parameters encoded.
func (b *Book) newOrder(svc Service, params any, email, locale string, amount int64) (Order, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return Order{}, fmt.Errorf("encoding order: %w", err)
	}
	return Order{
		ID: newID(), Service: svc, Status: AwaitingPayment, Params: raw, Email: email,
		Locale: locale, Amount: amount, Currency: b.cfg.Pricing.Currency, CreatedAt: b.cfg.Now(),
	}, nil
}
