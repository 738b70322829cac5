package v1

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
	"parla/api/orders"
	"parla/providers/sqldb"
)

// The SDKs retry 409, 429 and 5xx by themselves: a refusal no retry can mend says
// x-should-retry: false, and one worth retrying says when (Retry-After).
func TestErrorsCarryOpenAIsRetryHints(t *testing.T) {
	for _, c := range []struct {
		err         error
		status      int
		retryAfter  string
		shouldRetry string
	}{
		{credit.ErrInFlight, 409, "1", ""},
		{credit.ErrIdempotencySpent, 409, "", "false"},
		{credit.ErrInsufficient, 429, "", "false"},
		{credit.ErrInvalidKey, 401, "", "false"},
		{orders.ErrServiceUnavailable, 503, "30", ""},
		{sqldb.ErrUnavailable, 503, "30", ""},
		{errors.New("engine crashed"), 500, "", ""},
	} {
		app := fiber.New()
		app.Get("/", func(ctx *fiber.Ctx) error { return send(ctx, classify(c.err, "")) })
		res, err := app.Test(httptest.NewRequest("GET", "/", nil))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.status || res.Header.Get("Retry-After") != c.retryAfter || res.Header.Get("x-should-retry") != c.shouldRetry {
			t.Errorf("%v: %d, Retry-After %q, x-should-retry %q; want %d, %q, %q", c.err, res.StatusCode,
				res.Header.Get("Retry-After"), res.Header.Get("x-should-retry"), c.status, c.retryAfter, c.shouldRetry)
		}
	}
}
