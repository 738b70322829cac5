// Package providers declares the small interfaces through which the order book reaches the
// outside world (Speaker, Transcriber, Storage, Mailer, Payments) and what they exchange:
// the requests, the Transcript, the voices and formats on offer, and the errors callers
// test for. Implementations live in the sub-packages; main.go picks one for each from
// configuration (newSpeaker, newTranscriber, newStorage, newMailer).
//
// The optional capabilities some engines have beyond those (listing keys, a readiness
// call, naming languages, …; at the end of this file) are declared here too, and each implementation
// asserts the ones it has (`var _ providers.KeyLister = (*Disk)(nil)`), so that renaming a
// method breaks the build instead of silently switching a capability off.
package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Service names one of the three paid services, spelled like the API routes. The order
// book (api/orders) and the letters (providers/mail) share this one enum.
type Service string

// The services Parla sells.
const (
	TTS Service = "tts" // text-to-speech
	STT Service = "sst" // audio-to-text (the spec's route name is "sst")
	VTT Service = "vtt" // video-to-text
)

// Valid reports whether s is one of the three services.
func (s Service) Valid() bool { return s == TTS || s == STT || s == VTT }

// ErrUnavailable is returned (wrapped) by an engine that cannot serve requests in this
// deployment: not compiled in, no API key, model missing. Callers close the service.
var ErrUnavailable = errors.New("engine unavailable")

// ErrRefused is returned (wrapped) by an engine whose server refused the request itself
// (an HTTP 4xx other than 408, 409 and 429: an unknown model or voice, a bad key): asking
// again gets the same answer, so the order book refunds at once instead of retrying.
var ErrRefused = errors.New("refused")

// SpeechRequest is one text-to-speech job, already validated by the order book.
type SpeechRequest struct {
	Voice  string  // one of Voices, lower case
	Text   string  // non-empty, at most the configured maximum
	Format string  // one of SpeechFormats
	Speed  float64 // 0.25–4
	// Language is the BCP-47 code the text is spoken in ("en", "es", "ja"), chosen by the
	// visitor or detected by the order book; empty means the engine's default (English).
	Language string
	// DetectParagraphs says the text mixes languages: Language is its main one, found by
	// detection, and an engine that speaks per language detects each paragraph again,
	// speaking those it cannot tell in Language. False: the whole text in Language.
	DetectParagraphs bool
	// Instructions say how to speak (tone, pace, accent), as OpenAI's gpt-4o-mini-tts
	// takes them; engines that take none ignore them. The API's speech only (api/v1).
	Instructions string
	// Progress, when set, is called with 0–100 as the engine works. It may be called from
	// another goroutine and must not block.
	Progress func(percent int)
}

// Voices are the six voices the product offers, in display order.
var Voices = []string{"alloy", "echo", "fable", "onyx", "nova", "shimmer"}

// SpeechFormats are the audio formats a visitor can order, default first.
var SpeechFormats = []string{"mp3", "opus", "aac", "flac"}

// Speaker turns text into encoded audio written to w.
type Speaker interface {
	// Speak writes the whole encoded file to w or returns an error; on error the caller
	// discards whatever was written.
	Speak(ctx context.Context, req SpeechRequest, w io.Writer) error
	// Available reports nil when the engine can take orders, or an error wrapping
	// ErrUnavailable that says why not.
	Available() error
}

// Object is a stored file as the storage returns it.
type Object struct {
	Body io.ReadCloser
	Size int64
}

// Storage keeps results and uploads under opaque keys.
type Storage interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	Get(ctx context.Context, key string) (Object, error)
	Delete(ctx context.Context, key string) error
	// PresignGet returns a short-lived URL from which the browser downloads the object
	// directly with the given attachment filename, or ErrNoPresign when the storage has no
	// such URLs (local disk), in which case the app streams the file itself.
	PresignGet(ctx context.Context, key, filename string, ttl time.Duration) (*url.URL, error)
}

// ErrNoPresign tells the caller to stream the object itself.
var ErrNoPresign = errors.New("storage has no presigned URLs")

// ErrNotFound is returned (wrapped) by Storage.Get and Delete for a missing key.
var ErrNotFound = errors.New("object not found")

// Message is one e-mail, already rendered. From is fixed by the sender's configuration.
type Message struct {
	// ID, when set, names the message for good (letters: order id and kind): it becomes
	// the Message-ID, so a message sent again after a crash is the same message to the
	// recipient's system, and the outbox keeps one file per ID.
	ID      string
	To      string
	Subject string
	Text    string
	HTML    string
}

// Mailer delivers messages. An error of Send wraps ErrNotSent when the message certainly
// did not leave; any other error leaves its fate unknown (it may have been delivered).
type Mailer interface {
	Send(ctx context.Context, m Message) error
}

// ErrNotSent is wrapped by a Mailer's error when the message certainly did not leave: the
// failure came before its data was handed over (for SMTP: connecting, TLS, EHLO, AUTH, MAIL
// FROM, RCPT TO or the DATA command refused, a context ended before the data; for an outbox:
// its file not written), or the server refused it with a reply at the end of its data (a
// 4xx or 5xx: only a 2xx takes it). An error without it came with no answer after the data
// (an answer that came late, a connection cut after the data): the message may have left,
// and a caller that promises at most one letter must not send it again.
var ErrNotSent = errors.New("not sent")

// CheckoutRequest is what the order book asks the payment provider for: one line item at
// the server's own price.
type CheckoutRequest struct {
	OrderID     string // goes to metadata["order_id"] and client_reference_id
	Email       string // customer e-mail, prefilled on the hosted page
	Locale      string // interface language (en, jp, es, ru, zh, ar)
	Name        string // line item name
	Description string // line item description
	ImageURL    string // line item image (absolute URL), may be empty
	Amount      int64  // unit amount in minor units
	Currency    string // "eur"
	SuccessURL  string // must contain {CHECKOUT_SESSION_ID}
	CancelURL   string
	ExpiresAt   time.Time // when the hosted page stops accepting payment
}

// CheckoutSession is the payment provider's view of a session.
type CheckoutSession struct {
	ID            string
	URL           string // hosted checkout page
	OrderID       string // from metadata / client_reference_id
	Status        string // open, complete, expired
	PaymentStatus string // unpaid, paid, no_payment_required
	PaymentIntent string
	Email         string
	Name          string
	AmountTotal   int64
	Currency      string
}

// Paid reports whether the money has been taken.
func (s CheckoutSession) Paid() bool {
	return s.PaymentStatus == "paid" || s.PaymentStatus == "no_payment_required"
}

// Payments creates hosted checkouts, looks them up and refunds them.
type Payments interface {
	CreateCheckout(ctx context.Context, req CheckoutRequest) (CheckoutSession, error)
	GetCheckout(ctx context.Context, sessionID string) (CheckoutSession, error)
	// ExpireCheckout closes an open session so that it can no longer be paid, and returns
	// it as it then is: expired, or complete when it was paid first.
	ExpireCheckout(ctx context.Context, sessionID string) (CheckoutSession, error)
	// Refund returns the whole payment; the key makes a repeated call a no-op.
	Refund(ctx context.Context, paymentIntent, idempotencyKey string) error
}

// PartRefunder is a payment provider that refunds part of a payment (Stripe, the test
// checkout): the API credit's unused balance. idempotencyKey makes a repeated call the
// same refund.
type PartRefunder interface {
	RefundPart(ctx context.Context, paymentIntent string, amount int64, idempotencyKey string) error
}

// ErrPaymentProvider is returned (wrapped) when the payment provider cannot be reached or
// refuses a call for reasons of its own: nothing the visitor can change, try again later.
var ErrPaymentProvider = errors.New("payment provider unavailable")

// ErrNotRefunded is wrapped by a Payments.Refund error when the refund certainly did not
// happen (the provider answered and refused it). An error without it (a timeout, a cut
// connection) leaves the refund's fate unknown: the money may be back.
var ErrNotRefunded = errors.New("refund refused")

// ErrSessionNotFound is returned (wrapped) by GetCheckout for an unknown session id.
var ErrSessionNotFound = errors.New("checkout session not found")

// Check validates a speech request for an engine and fills in the default speed (1). It
// names the engine in its errors. Engines call it first; the order book has already
// validated the same rules for the visitor.
func (r *SpeechRequest) Check(engine string) error {
	if !slices.Contains(Voices, r.Voice) {
		return fmt.Errorf("%s: unknown voice %q", engine, r.Voice)
	}
	if !slices.Contains(SpeechFormats, r.Format) {
		return fmt.Errorf("%s: unknown format %q", engine, r.Format)
	}
	if r.Speed == 0 {
		r.Speed = 1
	}
	if !(r.Speed >= 0.25 && r.Speed <= 4) {
		return fmt.Errorf("%s: speed %v outside 0.25–4", engine, r.Speed)
	}
	if strings.TrimSpace(r.Text) == "" {
		return fmt.Errorf("%s: empty text", engine)
	}
	return nil
}

// Report calls Progress when it is set.
func (r SpeechRequest) Report(percent int) {
	if r.Progress != nil {
		r.Progress(percent)
	}
}

// TranscriptFormats are the transcript formats a visitor can order, in display order. An
// empty format means "json".
var TranscriptFormats = []string{"json", "text", "srt", "verbose_json", "vtt"}

// Segment is one timed piece of a transcript. Start may equal End (a zero-length segment)
// and segments may overlap; renderers cope with both.
type Segment struct {
	Start time.Duration
	End   time.Duration
	Text  string
	// Words are the segment's words with their own times, in order, when the engine gives
	// them (whisper token timestamps, OpenAI's word granularity); nil otherwise, and the
	// renderers share the segment's time out by characters instead.
	Words []Word
	// Speaker names who speaks, when the engine tells speakers apart (OpenAI's diarizing
	// model: "A", "B", …) or the visitor named them in the editor; empty otherwise (whisper).
	// Left out of the stored JSON when empty, so transcripts without speakers are stored
	// as before.
	Speaker string `json:",omitempty"`
}

// Word is one timed word of a segment. Text carries its leading space, if any, as the
// engine gave it, so joining the words gives the segment's text.
type Word struct {
	Start time.Duration
	End   time.Duration
	Text  string
}

// Transcript is what a speech-to-text engine returns, before it is rendered in the
// visitor's format (see providers/transcript).
type Transcript struct {
	// Language is the spoken language as the engine names it ("english"), or the hint.
	Language string
	// Duration of the audio.
	Duration time.Duration
	// Text is the whole transcript; segments joined when the engine gives none.
	Text     string
	Segments []Segment
	// Translated marks an English translation of the speech rather than a transcript in
	// its own language (verbose_json says "task": "translate").
	Translated bool
}

// TranscribeRequest is one speech-to-text job.
type TranscribeRequest struct {
	// Path is a local media file in any format ffmpeg reads (audio or video with audio).
	Path string
	// Language is an ISO-639-1 hint ("en", "de"); empty means detect.
	Language string
	// Translate asks for an English translation of the speech instead of a transcript in
	// its own language (whisper's translate task, OpenAI's translations endpoint).
	Translate bool
	// Duration is the probed duration of Path, used to plan chunks and report progress;
	// 0 when unknown.
	Duration time.Duration
	// Prompt is text the speech continues or contains (names, terms, a style), as OpenAI's
	// prompt and whisper's initial prompt take it; empty: none.
	Prompt string
	// Temperature is the sampling temperature, 0–1; 0: the engine's own choice.
	Temperature float64
	// Progress, when set, is called with 0–100 as the engine works. It may be called from
	// another goroutine and must not block.
	Progress func(percent int)
	// Partial, when set, is called with each piece of text, in order, as the engine
	// decodes it (whisper.cpp's segments, a remote engine's stream), for a streamed answer;
	// the transcript returned is still the whole. It may be called from another goroutine
	// and may block while the piece is sent on.
	Partial func(text string)
}

// Report calls Progress when it is set.
func (r TranscribeRequest) Report(percent int) {
	if r.Progress != nil {
		r.Progress(percent)
	}
}

// Transcriber turns speech into a timed transcript.
type Transcriber interface {
	Transcribe(ctx context.Context, req TranscribeRequest) (Transcript, error)
	// Available reports nil when the engine can take orders, or an error wrapping
	// ErrUnavailable that says why not.
	Available() error
}

// The optional capabilities: a caller holding a Speaker, Transcriber, Storage or Payments
// asks for one with a type assertion and does without when the engine lacks it. Each
// implementation asserts those it has with `var _ providers.X = (*Impl)(nil)` in its own
// package.

// KeyLister is a storage that lists keys by prefix (disk and MinIO): the order book erases
// an order's files and sweeps orphans with it; without it, only the keys it knows go.
type KeyLister interface {
	Keys(ctx context.Context, prefix string) ([]string, error)
}

// StorageChecker is a storage with a cheap readiness call (disk and MinIO), which /readyz
// runs.
type StorageChecker interface {
	Check(ctx context.Context) error
}

// ServerChecker is an engine that calls a server over the network (the OpenAI-compatible
// engines): it can ask whether that server is up, and the answer opens or closes it. The
// start and /readyz ask each base URL once.
type ServerChecker interface {
	Check(ctx context.Context) error
	// BaseURL is the server the engine calls, without any user name and password.
	BaseURL() string
}

// TranslationChecker is a transcription engine that can tell, before an order is taken,
// whether it can translate speech into English (whisper cannot with an English-only model,
// OpenAI's diarizing model cannot). An engine without this check is taken to translate.
type TranslationChecker interface {
	Translates() error
}

// BackendNamer is a transcription engine that says where it computes ("CUDA0 (…)", "CPU";
// whisper.cpp), for the start's log and /readyz; empty when it cannot compute at all.
type BackendNamer interface {
	Backend() string
}

// LanguageLister is a speech engine that names the languages it speaks (codes as
// speechlang.Normalize gives them). An engine that names none speaks its default.
type LanguageLister interface {
	Languages() []string
}

// Labeler is a speech engine that names itself as visitors read it ("eSpeak NG").
type Labeler interface {
	Label() string
}

// EngineNamer is a speech engine made of several (providers/speechroute, TTS_ENGINE as a
// list) that names, as visitors read it, the engine that reads a language now.
type EngineNamer interface {
	// Namer returns what names the engine of a language, each engine's state read once.
	Namer() func(lang string) string
}

// SpeakerGroup is a speech engine made of several (providers/speechroute): each of its
// engines is asked on its own whether its server is up.
type SpeakerGroup interface {
	Speakers() []Speaker
}

// EmailEraser is a payment provider that keeps the visitor's address where we can erase it
// (the built-in test checkout; Stripe keeps its own records).
type EmailEraser interface {
	EraseEmail(ctx context.Context, sessionID string) error
}

// WebhookEvent is a verified event of the payment provider.
type WebhookEvent struct {
	ID      string    // evt_…, for de-duplication
	Type    string    // e.g. checkout.session.completed
	Created time.Time // when the provider created the event
	// APIVersion is the version the event was rendered with; it may differ from the
	// client library's, worth a log line.
	APIVersion string
	// Session is set for checkout.session.* events and empty otherwise.
	Session CheckoutSession
	// PaymentIntent is set for charge.refunded and charge.dispute.created events: the
	// payment refunded or disputed at the provider (its dashboard, the buyer's bank).
	PaymentIntent string
}

// WebhookParser is a payment provider that notifies by webhook (Stripe): it verifies and
// decodes a delivery. The built-in test checkout has none.
type WebhookParser interface {
	ParseWebhook(payload []byte, sigHeader string) (WebhookEvent, error)
}
