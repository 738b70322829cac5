package v1

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
)

// keyLocal is where authenticate leaves the request's key.
const keyLocal = "parla.creditKey"

// authenticate finds the active key of the Bearer token (read on every call, so a revoked
// key is refused at once on every node).
func (a *API) authenticate(c *fiber.Ctx) error {
	auth := c.Get(fiber.HeaderAuthorization)
	secret, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return send(c, &apiError{status: 401, typ: invalidRequest, code: "invalid_api_key",
			message: "You didn't provide an API key: send Authorization: Bearer <key>. Buy credit and get a key at /api.", hint: retryNever})
	}
	k, err := a.deps.Credit.Ledger.Authenticate(c.UserContext(), strings.TrimSpace(secret))
	if err != nil {
		return a.fail(c, err, "")
	}
	c.Locals(keyLocal, k)
	return c.Next()
}

func keyOf(c *fiber.Ctx) string {
	k, _ := c.Locals(keyLocal).(credit.Key)
	return k.ID
}

func keyOfCall(c *fiber.Ctx) credit.Key {
	k, _ := c.Locals(keyLocal).(credit.Key)
	return k
}
