package admin

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
)

// The API's keys (api/credit) as the operator sees them: masked, with what is left and how
// many calls spent it; revoke one, refund an unused one.

// keyJSON is one key in the list.
type keyJSON struct {
	ID       string  `json:"id"`
	Key      string  `json:"key"` // masked
	Status   string  `json:"status"`
	Email    string  `json:"email"`
	Amount   int64   `json:"amount"` // cents paid
	Currency string  `json:"currency"`
	Balance  float64 `json:"balance"` // cents left
	Held     float64 `json:"held"`    // cents held by calls running now
	Calls    int64   `json:"calls"`
	// Letter is the key's letter's fate: sending, sent, retry (refused for now, sent
	// again), failed (not sent after its tries), refused (for good); "" before payment.
	Letter    string     `json:"letter"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"` // nil until paid
}

func keyOut(k credit.Key) keyJSON {
	masked := ""
	if k.Last4 != "" {
		masked = k.Masked()
	}
	return keyJSON{ID: k.ID, Key: masked, Status: k.Status, Email: k.Email, Amount: k.Amount, Currency: k.Currency,
		Balance: credit.Cents(k.Balance), Held: credit.Cents(k.Held), Calls: k.Calls, Letter: k.MailState,
		CreatedAt: k.CreatedAt, ExpiresAt: opt(k.ExpiresAt)}
}

func (a *Admin) keyList(c *fiber.Ctx) error {
	keys, err := a.cfg.Keys.List(c.UserContext(), 200)
	if err != nil {
		return a.pages.failed(c, "listing API keys", err)
	}
	out := make([]keyJSON, len(keys))
	for i, k := range keys {
		out[i] = keyOut(k)
	}
	if wantsJSON(c) {
		return c.JSON(fiber.Map{"keys": out})
	}
	return a.pages.page(c, "keys", view{Title: "API keys", Keys: out, CSRF: a.door.csrfOf(c), Notice: c.Query("did")})
}

func (a *Admin) keyAction(c *fiber.Ctx) error {
	id, name := c.Params("id"), c.Params("action")
	var err error
	switch name {
	case "revoke":
		err = a.cfg.Keys.Revoke(c.UserContext(), id)
	case "refund":
		err = a.cfg.Keys.Refund(c.UserContext(), id)
	default:
		return a.pages.refuse(c, fiber.StatusNotFound, "not_found", "No such action.")
	}
	switch {
	case errors.Is(err, credit.ErrRefused):
		return a.pages.refuse(c, fiber.StatusConflict, "refused", err.Error())
	case errors.Is(err, credit.ErrNotFound):
		return a.pages.refuse(c, fiber.StatusNotFound, "not_found", "No such key.")
	case err != nil:
		return a.pages.failed(c, "API key "+name, err)
	}
	a.cfg.Log.Info("admin action on an API key", "action", name, "credit", id, "by", current(c).Who)
	if wantsJSON(c) {
		return c.JSON(fiber.Map{"ok": true, "action": name})
	}
	return c.Redirect("/admin/keys?did="+name, fiber.StatusSeeOther)
}
