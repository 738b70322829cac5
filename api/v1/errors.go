package v1

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
	"parla/api/orders"
	"parla/media"
	"parla/providers"
	"parla/providers/sqldb"
)

// OpenAI's error types.
const (
	invalidRequest = "invalid_request_error"
	serverError    = "server_error"
)

// apiError is a failure in OpenAI's shape: {"error": {message, type, param, code}}.
type apiError struct {
	status                    int
	typ, code, param, message string
	hint                      retryHint
}

// retryHint is what OpenAI's SDKs read to decide on a retry: Retry-After (seconds), or
// x-should-retry: false for a refusal no retry can mend. The SDKs retry 408, 409, 429 and
// 5xx by themselves otherwise.
type retryHint struct {
	after int  // seconds; 0: no Retry-After
	never bool // x-should-retry: false
}

// Retry hints of the errors that carry one.
var (
	retryNever   = retryHint{never: true}
	retrySoon    = retryHint{after: 1}  // a call with the same key still running
	retryShortly = retryHint{after: 5}  // the measuring pool is full
	retryMinute  = retryHint{after: 30} // a service or the database is down
)

func (e *apiError) Error() string { return e.code + ": " + e.message }

// invalid is a 400 naming the parameter at fault.
func invalid(param, code, message string) *apiError {
	return &apiError{status: 400, typ: invalidRequest, param: param, code: code, message: message}
}

// classify turns any failure of a call into what the client is told; param names the
// request's parameter an input error is about.
func classify(err error, param string) *apiError {
	var ae *apiError
	var ie *orders.InputError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, credit.ErrInvalidKey):
		return &apiError{status: 401, typ: invalidRequest, code: "invalid_api_key",
			message: "Incorrect API key provided. Buy credit and get a key at /api.", hint: retryNever}
	case errors.Is(err, credit.ErrInsufficient):
		return &apiError{status: 429, typ: "insufficient_quota", code: "insufficient_quota",
			message: "You exceeded your current quota: the key's credit does not cover this call. Buy more at /api.", hint: retryNever}
	case errors.Is(err, credit.ErrInFlight):
		return &apiError{status: 409, typ: invalidRequest, param: "Idempotency-Key", code: "idempotency_in_progress",
			message: credit.ErrInFlight.Error(), hint: retrySoon}
	case errors.Is(err, credit.ErrIdempotencyMismatch):
		return invalid("Idempotency-Key", "idempotency_key_reused", credit.ErrIdempotencyMismatch.Error())
	case errors.Is(err, credit.ErrIdempotencySpent):
		return &apiError{status: 409, typ: invalidRequest, param: "Idempotency-Key", code: "idempotency_key_spent",
			message: credit.ErrIdempotencySpent.Error(), hint: retryNever}
	case errors.As(err, &ie):
		return invalid(param, ie.Code, ie.Message)
	case errors.Is(err, errClientGone): // nobody reads it; the log and the metrics do
		return &apiError{status: 499, typ: invalidRequest, code: "client_closed_request",
			message: "The client closed the connection before the answer; nothing was charged."}
	case errors.Is(err, orders.ErrServiceUnavailable), errors.Is(err, providers.ErrUnavailable):
		return &apiError{status: 503, typ: serverError, code: "service_unavailable", message: "This service is closed on this server right now.", hint: retryMinute}
	case errors.Is(err, sqldb.ErrUnavailable):
		return &apiError{status: 503, typ: serverError, code: "database_unavailable", message: "The server cannot reach its database; nothing was charged. Try again in a minute.", hint: retryMinute}
	case errors.Is(err, media.ErrVisitorsBusy):
		return &apiError{status: 503, typ: serverError, code: "busy", message: "The server is measuring too many files; try again shortly.", hint: retryShortly}
	case errors.Is(err, media.ErrTooDense), errors.Is(err, media.ErrDurationMismatch):
		return invalid("file", "invalid_file", "The file's length cannot be measured reliably: "+err.Error())
	}
	return &apiError{status: 500, typ: serverError, code: "engine_error", message: "The engine failed; nothing was charged. Try again."}
}

// send writes an error in OpenAI's shape, with its retry hint.
func send(c *fiber.Ctx, e *apiError) error {
	if e.hint.after > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.hint.after))
	}
	if e.hint.never {
		c.Set("x-should-retry", "false")
	}
	return c.Status(e.status).JSON(fiber.Map{"error": errorBody(e)})
}

// errorBody is OpenAI's error object for e.
func errorBody(e *apiError) fiber.Map {
	var param any
	if e.param != "" {
		param = e.param
	}
	return fiber.Map{"message": e.message, "type": e.typ, "param": param, "code": e.code}
}

// fail logs a server-side failure and answers it.
func (a *API) fail(c *fiber.Ctx, err error, param string) error {
	e := classify(err, param)
	if e.status >= 500 {
		a.deps.Log.Error("API call failed", "route", c.Route().Path, "status", e.status, "code", e.code, "err", err)
	}
	return send(c, e)
}
