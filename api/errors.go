package api

import (
	"errors"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
	"parla/media"
	"parla/media/links"
	"parla/providers"
	"parla/providers/sqldb"
	"parla/providers/stripe"
)

// errorKind is one way a request can fail. code is stable: clients branch on it, and the
// page shows the visitor the translation under errors.<code> (webui/src/locales). message
// is English for people reading the API; a failure may carry a more precise one.
type errorKind struct {
	code    string
	status  int
	message string
	// causes are the sentinel errors (tested with errors.Is) that are this kind.
	causes []error
}

// errorKinds is the one table of what a failure becomes: kind → HTTP status → stable code →
// message key. api/README.md lists the same codes and statuses; a test holds them equal.
// Order matters only for causes: the first kind whose cause matches wins.
var errorKinds = []errorKind{
	// The request itself.
	{code: "bad_request", status: 400, message: "the request is not valid"},
	{code: "invalid_json", status: 400, message: "the request body is not valid JSON"},
	{code: "unsupported_media_type", status: 415, message: "the request body must be JSON, sent with Content-Type: application/json"},
	{code: "invalid_products", status: 400, message: "each product needs price_data.unit_amount and a positive quantity, in one currency"},
	{code: "missing_session", status: 400, message: "sessionId is required"},
	{code: "not_found", status: 404, message: "no such endpoint"},
	{code: "too_large", status: 413, message: "the request body is too large"},
	{code: "rate_limited", status: 429, message: "too many requests; try again in a minute",
		causes: []error{media.ErrVisitorsBusy}},
	{code: "unauthorized", status: 401, message: "this needs the operator's token: Authorization: Bearer <ADMIN_TOKEN>"},
	// Order parameters (orders.InputError carries these codes).
	{code: "invalid_voice", status: 400, message: "unknown voice"},
	{code: "invalid_format", status: 400, message: "unknown format"},
	{code: "invalid_speed", status: 400, message: "the speed is out of range"},
	{code: "empty_text", status: 400, message: "the text is empty"},
	{code: "text_too_long", status: 400, message: "the text is too long"},
	{code: "invalid_email", status: 400, message: "the e-mail address is not valid"},
	{code: "email_mismatch", status: 400, message: "the two e-mail addresses differ"},
	{code: "invalid_locale", status: 400, message: "unknown interface language"},
	{code: "invalid_language", status: 400, message: "unknown spoken language"},
	{code: "invalid_amount", status: 400, message: "the amount of API credit is outside the limits"},
	{code: "language_unsupported", status: 400, message: "the voices do not speak the language of this text"},
	{code: "translation_unavailable", status: 400, message: "this service cannot translate into English here; order a transcript instead"},
	{code: "price_mismatch", status: 409, message: "the price shown on the page is out of date; reload the page",
		causes: []error{orders.ErrPriceMismatch}},
	// Uploads.
	{code: "invalid_upload", status: 400, message: "the upload is not a complete multipart form"},
	{code: "no_file", status: 400, message: "the form has no field named file"},
	{code: "too_many_files", status: 400, message: "send exactly one file"},
	{code: "empty_file", status: 400, message: "the file is empty"},
	{code: "file_too_large", status: 413, message: "the file is larger than the limit"},
	{code: "not_audio", status: 422, message: "the file has no audio track"},
	{code: "unreadable_audio", status: 422, message: "the file is not audio we can read"},
	{code: "no_speech", status: 422, message: "we found no speech in this recording, so there is nothing to transcribe"},
	{code: "audio_too_long", status: 422, message: "the recording is longer than we take; split it into shorter files"},
	{code: "audio_too_dense", status: 422, message: "the file unpacks into far more audio than a recording of its size holds",
		causes: []error{media.ErrTooDense}},
	{code: "length_mismatch", status: 422, message: "the file's header and its content disagree about its length, so its price cannot be trusted",
		causes: []error{media.ErrDurationMismatch}},
	{code: "upload_not_found", status: 404, message: "the upload is unknown, expired or already paid for; upload the file again",
		causes: []error{orders.ErrUploadNotFound}},
	{code: "upload_quota", status: 429, message: "this address keeps as many unpaid uploads as it may; order one of them, or try again once they expire"},
	{code: "uploads_full", status: 503, message: "we keep too many unpaid uploads right now; try again later"},
	// Video links.
	{code: "empty_link", status: 400, message: "paste the link of a video"},
	{code: "unsupported_link", status: 400, message: "paste an http or https link to a video file or a YouTube video",
		causes: []error{links.ErrUnsupportedLink}},
	{code: "forbidden_address", status: 400, message: "this link points to an address we do not fetch from",
		causes: []error{links.ErrForbiddenAddress}},
	{code: "live_stream", status: 422, message: "live streams cannot be transcribed; use the recording once it has ended",
		causes: []error{links.ErrLiveStream}},
	{code: "video_unavailable", status: 422, message: "the video is private, age-restricted or no longer available",
		causes: []error{links.ErrVideoUnavailable}},
	{code: "not_media", status: 422, message: "the link does not lead to a video or audio file we can read",
		causes: []error{links.ErrNotMedia}},
	{code: "video_too_long", status: 422, message: "the video is longer than we take; try a shorter one",
		causes: []error{links.ErrTooLong}},
	{code: "platform_unreachable", status: 502, message: "we cannot reach YouTube right now; the link is probably fine, try again in a few minutes",
		causes: []error{links.ErrPlatformUnreachable}},
	{code: "source_unreachable", status: 422, message: "the site of this link did not answer as expected; check the link",
		causes: []error{links.ErrSourceUnreachable}},
	// A transcription's free preview.
	{code: "preview_budget_spent", status: 429, message: "this address has had this hour's free previews; you can still order"},
	{code: "preview_unavailable", status: 503, message: "previews are off here; you can still order",
		causes: []error{orders.ErrPreviewsOff}},
	{code: "preview_failed", status: 502, message: "the preview could not be made; your order is not affected",
		causes: []error{orders.ErrPreviewFailed}},
	// Sessions, results and downloads.
	{code: "session_not_found", status: 404, message: "no order belongs to this session",
		causes: []error{orders.ErrNotFound, providers.ErrSessionNotFound}},
	{code: "wrong_service", status: 404, message: "this session pays for another service",
		causes: []error{orders.ErrWrongService}},
	{code: "payment_required", status: 402, message: "this order has not been paid",
		causes: []error{orders.ErrUnpaid}},
	{code: "order_already_paid", status: 409, message: "this order is paid already; its page shows how it is going",
		causes: []error{orders.ErrAlreadyPaid}},
	{code: "order_refunded", status: 410, message: "the order could not be produced and the payment is refunded"},
	{code: "order_expired", status: 410, message: "the result has expired and was removed"},
	{code: "link_expired", status: 410, message: "this link has expired and the file was removed",
		causes: []error{orders.ErrLinkExpired}},
	// The transcript editor.
	{code: "no_transcript", status: 404, message: "this link's file has no transcript to edit",
		causes: []error{orders.ErrNoSegments}},
	{code: "invalid_transcript", status: 400, message: "the edited transcript is not valid"},
	{code: "cross_site", status: 403, message: "this change is accepted only from Parla's own page"},
	{code: "edit_conflict", status: 409, message: "the transcript was changed elsewhere since this version was opened; reload it to see the newer version",
		causes: []error{orders.ErrEditConflict}},
	{code: "version_required", status: 428, message: "a change of the transcript must name the version it started from in If-Match (the ETag its GET answered)"},
	// The built-in test checkout.
	{code: "session_expired", status: 410, message: "this checkout has expired; start again",
		causes: []error{stripe.ErrSessionExpired}},
	{code: "session_paid", status: 409, message: "this checkout is already paid",
		causes: []error{stripe.ErrSessionPaid}},
	// Stripe's webhook.
	{code: "invalid_signature", status: 400, message: "the webhook signature is not valid",
		causes: []error{stripe.ErrBadSignature}},
	{code: "invalid_payload", status: 400, message: "the webhook payload is not a readable event",
		causes: []error{stripe.ErrBadPayload}},
	// Ours.
	{code: "service_unavailable", status: 503, message: "this service is not available right now",
		causes: []error{orders.ErrServiceUnavailable}},
	{code: "database_unavailable", status: 503, message: "we cannot reach our order book right now; nothing was charged, try again in a minute",
		causes: []error{sqldb.ErrUnavailable}},
	{code: "payment_provider_error", status: 503, message: "the payment provider could not be reached; try again later",
		causes: []error{providers.ErrPaymentProvider}},
	{code: "internal", status: 500, message: "something went wrong on our side"},
}

// kindOf finds a kind by its code. An unknown code is a programming error: it answers as
// internal, and the table test catches it.
func kindOf(code string) errorKind {
	for _, k := range errorKinds {
		if k.code == code {
			return k
		}
	}
	return kindOf("internal")
}

// apiError is a failure as the client is told it: a kind and, optionally, a message more
// precise than the kind's.
type apiError struct {
	kind    errorKind
	message string
}

func (e *apiError) Error() string { return e.kind.code + ": " + e.message }

// fail is a failure of the given code, with a precise message or, when it is empty, the
// kind's own.
func fail(code, message string) error {
	k := kindOf(code)
	if message == "" {
		message = k.message
	}
	return &apiError{kind: k, message: message}
}

// classify maps any error to what the client is told. It is the one place where errors
// become statuses and codes, all through errorKinds.
func classify(err error) *apiError {
	var ae *apiError
	var ie *orders.InputError
	var fe *fiber.Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ie):
		return &apiError{kind: kindOf(ie.Code), message: ie.Message}
	}
	for _, k := range errorKinds {
		for _, cause := range k.causes {
			if errors.Is(err, cause) {
				return &apiError{kind: k, message: k.message}
			}
		}
	}
	if errors.As(err, &fe) {
		return fail(fiberCode(fe.Code), "").(*apiError)
	}
	return fail("internal", "").(*apiError)
}

// fiberCode names the errors Fiber itself raises (routing, body limits, the limiter).
func fiberCode(status int) string {
	switch status {
	case fiber.StatusNotFound:
		return "not_found"
	case fiber.StatusRequestEntityTooLarge:
		return "too_large"
	case fiber.StatusTooManyRequests:
		return "rate_limited"
	}
	if status >= 500 {
		return "internal"
	}
	return "bad_request"
}

// errorHandler is Fiber's last stop for every error a handler returns: it logs once and
// answers {ok:false, error:{code, message}}.
func errorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		e := classify(err)
		attrs := []any{"request", requestID(c), "method", c.Method(), "route", c.Route().Path,
			"status", e.kind.status, "code", e.kind.code}
		if e.kind.status >= 500 {
			log.Error("request failed", append(attrs, "err", err)...)
		} else {
			// Refusals are the visitor's business, and a flood of them must not fill the
			// disk: they are logged at debug only.
			log.Debug("request refused", append(attrs, "err", err)...)
		}
		return c.Status(e.kind.status).JSON(errorBody(e))
	}
}

func errorBody(e *apiError) fiber.Map {
	return fiber.Map{"ok": false, "error": fiber.Map{"code": e.kind.code, "message": e.message}}
}
