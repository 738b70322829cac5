package api

import (
	"errors"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
	"parla/media/links"
	"parla/providers"
	"parla/providers/stripe"
)

// apiError is an error with the status, stable code and client-safe message it maps to.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func fail(status int, code, message string) error {
	return &apiError{status: status, code: code, message: message}
}

// classify maps any error to what the client is told. It is the one place where errors
// become statuses and codes.
func classify(err error) *apiError {
	var ae *apiError
	var ie *orders.InputError
	var fe *fiber.Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ie):
		return &apiError{inputStatus(ie.Code), ie.Code, ie.Message}
	case errors.Is(err, orders.ErrUploadNotFound):
		return &apiError{fiber.StatusNotFound, "upload_not_found", "the upload is unknown, expired or already paid for; upload the file again"}
	case errors.Is(err, orders.ErrPriceMismatch):
		return &apiError{fiber.StatusConflict, "price_mismatch", "the price shown on the page is out of date; reload the page"}
	case errors.Is(err, orders.ErrServiceUnavailable):
		return &apiError{fiber.StatusServiceUnavailable, "service_unavailable", "this service is not available right now"}
	case errors.Is(err, orders.ErrUnpaid):
		return &apiError{fiber.StatusPaymentRequired, "payment_required", "this order has not been paid"}
	case errors.Is(err, orders.ErrNotFound), errors.Is(err, orders.ErrWrongService),
		errors.Is(err, providers.ErrSessionNotFound):
		return &apiError{fiber.StatusNotFound, "session_not_found", "no order belongs to this session"}
	case errors.Is(err, stripe.ErrBadSignature):
		return &apiError{fiber.StatusBadRequest, "invalid_signature", "the webhook signature is not valid"}
	case errors.Is(err, stripe.ErrBadPayload):
		return &apiError{fiber.StatusBadRequest, "invalid_payload", "the webhook payload is not a readable event"}
	case errors.As(err, &fe):
		return &apiError{fe.Code, fiberCode(fe.Code), fe.Message}
	}
	if le := linkError(err); le != nil {
		return le
	}
	return &apiError{fiber.StatusInternalServerError, "internal", "something went wrong on our side"}
}

// inputStatus is the status of a refused input: 400 unless the code says otherwise.
func inputStatus(code string) int {
	switch code {
	case "not_audio", "unreadable_audio", "video_too_long":
		return fiber.StatusUnprocessableEntity
	}
	return fiber.StatusBadRequest
}

// linkErrors map what analysing or fetching a video link found to what the visitor is told.
var linkErrors = []struct {
	err error
	api apiError
}{
	{links.ErrUnsupportedLink, apiError{fiber.StatusBadRequest, "unsupported_link", "paste an http or https link to a video file or a YouTube video"}},
	{links.ErrForbiddenAddress, apiError{fiber.StatusBadRequest, "forbidden_address", "this link points to an address we do not fetch from"}},
	{links.ErrLiveStream, apiError{fiber.StatusUnprocessableEntity, "live_stream", "live streams cannot be transcribed; use the recording once it has ended"}},
	{links.ErrVideoUnavailable, apiError{fiber.StatusUnprocessableEntity, "video_unavailable", "the video is private, age-restricted or no longer available"}},
	{links.ErrNotMedia, apiError{fiber.StatusUnprocessableEntity, "not_media", "the link does not lead to a video or audio file we can read"}},
	{links.ErrTooLong, apiError{fiber.StatusUnprocessableEntity, "video_too_long", "the video is longer than we take; try a shorter one"}},
	{links.ErrSourceUnreachable, apiError{fiber.StatusUnprocessableEntity, "source_unreachable", "the site of this link did not answer as expected; check the link"}},
}

func linkError(err error) *apiError {
	for _, le := range linkErrors {
		if errors.Is(err, le.err) {
			e := le.api
			return &e
		}
	}
	return nil
}

func fiberCode(status int) string {
	switch status {
	case fiber.StatusNotFound:
		return "not_found"
	case fiber.StatusRequestEntityTooLarge:
		return "too_large"
	case fiber.StatusMethodNotAllowed:
		return "method_not_allowed"
	case fiber.StatusTooManyRequests:
		return "rate_limited"
	case fiber.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case fiber.StatusRequestTimeout:
		return "timeout"
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
			"status", e.status, "code", e.code}
		if e.status >= 500 {
			log.Error("request failed", append(attrs, "err", err)...)
		} else {
			log.Info("request refused", append(attrs, "err", err)...)
		}
		return c.Status(e.status).JSON(errorBody(e))
	}
}

func errorBody(e *apiError) fiber.Map {
	return fiber.Map{"ok": false, "error": fiber.Map{"code": e.code, "message": e.message}}
}
