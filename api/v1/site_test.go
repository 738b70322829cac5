package v1

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// POST /services/credit, which the key page polls every 1.5 s, is limited per client as
// the site's routes are: 4 × RATE_LIMIT a minute, answered 429 past it, one client's
// polls never another's. Before, it had no limit.
func TestCreditPollIsLimitedPerClient(t *testing.T) {
	a := New(Config{RateLimit: 10}, Deps{ClientOf: func(c *fiber.Ctx) string { return c.Get("X-Client") }})
	app := fiber.New()
	a.Mount(app)
	poll := func(client string) int {
		// Not JSON: refused by the handler, after the limit counted it.
		req := httptest.NewRequest("POST", "/services/credit", strings.NewReader("{"))
		req.Header.Set("X-Client", client)
		res, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode
	}
	for i := range 40 {
		if got := poll("a"); got == fiber.StatusTooManyRequests {
			t.Fatalf("poll %d of 40 a minute refused", i+1)
		}
	}
	if got := poll("a"); got != fiber.StatusTooManyRequests {
		t.Errorf("the 41st poll of a minute: %d, want 429", got)
	}
	if got := poll("b"); got == fiber.StatusTooManyRequests {
		t.Error("another client's poll refused")
	}
}
