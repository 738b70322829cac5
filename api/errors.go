package api

import (
	"errors"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
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
		return &apiError{fiber.StatusBadRequest, ie.Code, ie.Message}
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
	return &apiError{fiber.StatusInternalServerError, "internal", "something went wrong on our side"}
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
