package orders

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"parla/providers"
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
	Client         string // ClientKey of the visitor's address: whose analysis of Link may be reused
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
	email, locale, err = validateContact(r.Email, r.EmailVerify, r.Locale)
	return format, language, email, locale, err
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
	p := TranscriptParams{Format: format, Language: language, Seconds: Seconds(u.Duration), Upload: u.ID, FileName: u.FileName,
		Translate: req.Translate}
	claim := func(o Order) error {
		ok, err := d.uploads.claim(ctx, u.ID, o.ID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s is paid for already", ErrUploadNotFound, uploadRef(u.ID))
		}
		return nil
	}
	return d.take(ctx, req.sale(STT, p, d.intake.QuoteSeconds(STT, u.Duration), email, locale, claim))
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
	info, amount, err := d.intake.AnalyzeLink(ctx, req.Client, req.Link)
	if err != nil {
		return Checkout{}, err
	}
	p := TranscriptParams{Format: format, Language: language, Seconds: Seconds(info.Duration), Link: linkParams(info),
		Translate: req.Translate}
	return d.take(ctx, req.sale(VTT, p, amount, email, locale, nil))
}

// sale is the request's order for take, its quantity the seconds priced.
func (req TranscriptRequest) sale(svc Service, p TranscriptParams, amount int64, email, locale string, bind func(Order) error) sale {
	return sale{svc: svc, params: p, quantity: p.Seconds, amount: amount, email: email, locale: locale, key: req.Key,
		clientAmount: req.ClientAmount, clientCurrency: req.ClientCurrency, bind: bind}
}
