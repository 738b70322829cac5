package v1

import (
	"bytes"
	"encoding/json"
	"mime"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
	"parla/api/orders"
)

// The two site routes that sell credit answer as the site does ({ok, error:{code}}, the
// app's error table), since the /api page shows their errors in the visitor's language.

// siteError is a refusal with a code of the app's error table.
func siteError(code, message string) error { return &orders.InputError{Code: code, Message: message} }

// decodeJSON reads one JSON value sent as application/json, as the site's JSON routes do.
func decodeJSON(c *fiber.Ctx, v any) error {
	if mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); err != nil || mt != fiber.MIMEApplicationJSON {
		return siteError("unsupported_media_type", "the request body must be JSON, sent with Content-Type: application/json")
	}
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	if err := dec.Decode(v); err != nil || dec.More() {
		return siteError("invalid_json", "the request body is not valid JSON")
	}
	return nil
}

// creditConfig is GET /api/credit/config: what the /api page needs to sell credit.
func (a *API) creditConfig(c *fiber.Ctx) error {
	cfg := a.deps.Credit.Config()
	return c.JSON(fiber.Map{"ok": true, "min": cfg.MinAmount, "max": cfg.MaxAmount, "currency": cfg.Currency,
		"validDays": int(cfg.TTL.Hours() / 24)})
}

// createCheckout is POST /payment/credit/create-checkout-session.
func (a *API) createCheckout(c *fiber.Ctx) error {
	var body struct {
		Order struct {
			Amount      int64  `json:"amount"`
			Email       string `json:"email"`
			EmailVerify string `json:"emailVerify"`
			Locale      string `json:"locale"`
		} `json:"order"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	co, err := a.deps.Credit.Shop.Open(c.UserContext(), credit.Purchase{Amount: body.Order.Amount,
		Email: body.Order.Email, EmailVerify: body.Order.EmailVerify, Locale: body.Order.Locale})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "sessionId": co.SessionID, "url": co.URL, "amount": co.Amount, "currency": co.Currency})
}

// creditResult is POST /services/credit: 202 until paid, then the key (in full in the
// first answer only), its balance and expiry.
func (a *API) creditResult(c *fiber.Ctx) error {
	var body struct {
		SessionID string `json:"sessionId"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if body.SessionID == "" {
		return siteError("missing_session", "sessionId is required")
	}
	r, err := a.deps.Credit.Shop.Result(c.UserContext(), body.SessionID)
	if err != nil {
		return err
	}
	if r.Pending {
		return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"ok": true, "status": credit.StatusAwaiting})
	}
	return c.JSON(fiber.Map{"ok": true, "data": fiber.Map{"key": r.Key, "full": r.Full, "balance": credit.Cents(r.Balance),
		"currency": r.Currency, "expiresAt": r.ExpiresAt.UTC().Format(time.RFC3339)}})
}

// balance is GET /v1/credit: the key's balance (cents, fractional), expiry and its last
// calls (sizes, prices, times; never texts or audio).
func (a *API) balance(c *fiber.Ctx) error {
	k, err := a.deps.Credit.Ledger.Key(c.UserContext(), keyOfCall(c).ID)
	if err != nil {
		return a.fail(c, err, "")
	}
	calls, err := a.deps.Credit.Ledger.Recent(c.UserContext(), k.ID, 20)
	if err != nil {
		return a.fail(c, err, "")
	}
	list := make([]fiber.Map, len(calls))
	for i, call := range calls {
		unit := "characters"
		if !isSpeechModel(call.Model) {
			unit = "milliseconds"
		}
		list[i] = fiber.Map{"model": call.Model, "units": call.Units, "unit": unit, "cost": credit.Cents(call.Amount),
			"status": call.State, "created_at": call.CreatedAt.Unix()}
	}
	return c.JSON(fiber.Map{"object": "credit", "key": k.Masked(), "balance": credit.Cents(k.Balance), "currency": k.Currency,
		"expires_at": k.ExpiresAt.Unix(), "calls": list})
}
