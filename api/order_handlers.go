package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
)

// decodeJSON reads the request body into v, refusing anything that is not one JSON value
// sent as application/json. The type matters: a text/plain or form body is one any other
// site's page can make a visitor's browser send without asking the server first, so a
// JSON endpoint that took it would act for that site. Its refusals say what is wrong in
// the body's own words (a field's JSON path), never in Go's (types, structs).
func decodeJSON(c *fiber.Ctx, v any) error {
	if mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); err != nil || mt != fiber.MIMEApplicationJSON {
		return fail("unsupported_media_type", "")
	}
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return fail("invalid_json", "the request body's field "+strings.TrimPrefix(typeErr.Field, ".")+" has the wrong type")
		}
		return fail("invalid_json", "")
	}
	// Nothing may follow the value: not a second one, not a stray bracket.
	if _, err := dec.Token(); err != io.EOF {
		return fail("invalid_json", "the request body holds more than one JSON value")
	}
	return nil
}

// lineItem is the spec's checkout line item, which the page may still send; the server
// only compares its amount with its own price.
type lineItem struct {
	PriceData struct {
		Currency   string `json:"currency"`
		UnitAmount *int64 `json:"unit_amount"`
	} `json:"price_data"`
	Quantity *int64 `json:"quantity"`
}

// clientTotal adds up the page's line items; nil when the page sent none.
func clientTotal(items []lineItem) (amount *int64, currency string, err error) {
	if len(items) == 0 {
		return nil, "", nil
	}
	var total int64
	for i, it := range items {
		q := int64(1)
		if it.Quantity != nil {
			q = *it.Quantity
		}
		if it.PriceData.UnitAmount == nil || *it.PriceData.UnitAmount < 0 || q < 1 {
			return nil, "", fail("invalid_products", "each product needs price_data.unit_amount and a positive quantity")
		}
		if i > 0 && it.PriceData.Currency != currency { // one without a currency is one too
			return nil, "", fail("invalid_products", "products use more than one currency")
		}
		currency = it.PriceData.Currency
		// unit × q and the sum must stay within int64: a wrapped total could even come out
		// equal to the server's price.
		if unit := *it.PriceData.UnitAmount; unit > 0 && q > (math.MaxInt64-total)/unit {
			return nil, "", fail("invalid_products", "the products add up to more than any price")
		}
		total += *it.PriceData.UnitAmount * q
	}
	return &total, currency, nil
}

type ttsCheckoutBody struct {
	Order struct {
		Voice       string   `json:"voice"`
		Input       string   `json:"input"`
		Format      string   `json:"format"`
		Speed       *float64 `json:"speed"`
		Email       string   `json:"email"`
		EmailVerify string   `json:"emailVerify"`
		Locale      string   `json:"locale"`
		Language    string   `json:"language"` // BCP-47; empty: detect
		Key         string   `json:"key"`      // the page's order key: one key, one payment
	} `json:"order"`
	Products []lineItem `json:"products"`
}

func (s orderHandlers) createTTSCheckout(c *fiber.Ctx) error {
	var body ttsCheckoutBody
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	amount, currency, err := clientTotal(body.Products)
	if err != nil {
		return err
	}
	speed := 1.0
	if body.Order.Speed != nil {
		speed = *body.Order.Speed
	}
	co, err := s.deps.Book.Desk.CreateTTS(c.UserContext(), orders.TTSRequest{
		Params: orders.TTSParams{Voice: body.Order.Voice, Text: body.Order.Input,
			Format: body.Order.Format, Speed: speed},
		Email: body.Order.Email, EmailVerify: body.Order.EmailVerify, Locale: body.Order.Locale,
		Language: body.Order.Language, Key: body.Order.Key,
		ClientAmount: amount, ClientCurrency: currency,
	})
	return s.checkoutAnswer(c, co, err)
}

// quoteTTS tells the page, before payment, what a text costs and the language it will be
// spoken in.
func (s orderHandlers) quoteTTS(c *fiber.Ctx) error {
	var body struct {
		Text     string `json:"text"`
		Language string `json:"language"` // BCP-47; empty: detect
		Locale   string `json:"locale"`   // interface language, for texts whose language cannot be told
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	locale, err := orders.ValidateLocale(body.Locale)
	if err != nil {
		return err
	}
	q, err := s.deps.Book.Desk.QuoteSpeech(body.Text, body.Language, locale)
	if err != nil {
		return err
	}
	answer := fiber.Map{"ok": true, "language": q.Language, "detected": q.Detected, "mixed": q.Mixed,
		"characters": q.Chars, "amount": q.Amount, "currency": q.Currency}
	if q.Readers != nil { // several engines: which reads which of the text's languages
		answer["engines"] = q.Readers
	}
	return c.JSON(answer)
}

// checkoutAnswer tells the page where to pay.
func (s orderHandlers) checkoutAnswer(c *fiber.Ctx, co orders.Checkout, err error) error {
	var paid *orders.AlreadyPaidError
	if errors.As(err, &paid) {
		// The way to the order that was paid, so the page can send the visitor there.
		e := fail("order_already_paid", "").(*apiError)
		body := errorBody(e)
		body["order"] = paidOrderView(paid.Order)
		return c.Status(e.kind.status).JSON(body)
	}
	if err != nil {
		return err
	}
	answer := fiber.Map{"ok": true, "sessionId": co.SessionID, "url": co.URL,
		"amount": co.Amount, "currency": co.Currency}
	if co.Language != "" {
		answer["language"] = co.Language
	}
	return c.JSON(answer)
}

// paidOrderView is what the page needs to lead to a paid order's page.
func paidOrderView(o orders.Order) fiber.Map {
	return fiber.Map{"id": o.ID, "service": o.Service, "status": o.Status,
		"sessionId": o.SessionID, "url": OrderRoutes().SuccessPath(o)}
}

// orderByKey tells a page, before it offers to pay, whether the order of its key is paid
// already (and how to reach it).
func (s orderHandlers) orderByKey(c *fiber.Ctx) error {
	svc, err := service(c)
	if err != nil {
		return err
	}
	o, err := s.deps.Book.Desk.PaidByKey(c.UserContext(), svc, c.Query("key"))
	if errors.Is(err, orders.ErrNotFound) {
		return c.JSON(fiber.Map{"ok": true, "paid": false})
	}
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "paid": true, "order": paidOrderView(o)})
}

// orderView is the order as the confirmation page sees it.
func (s orderHandlers) orderView(o orders.Order) fiber.Map {
	v := fiber.Map{"id": o.ID, "service": o.Service, "status": o.Status, "progress": o.Progress,
		"link": "", "expiresAt": "", "error": o.Error, "amount": o.Amount, "currency": o.Currency}
	if o.Service != orders.TTS {
		v["translate"] = orders.Translated(o)
	}
	if o.Status == orders.Done {
		v["link"] = s.deps.Book.Link(o)
		v["expiresAt"] = o.LinkExpiresAt.UTC().Format(time.RFC3339)
	}
	return v
}

func (s orderHandlers) lookupSession(c *fiber.Ctx) error {
	svc, err := service(c)
	if err != nil {
		return err
	}
	id := c.Query("sessionId")
	if id == "" {
		return fail("missing_session", "sessionId is required")
	}
	l, err := s.deps.Book.Cashier.Lookup(c.UserContext(), svc, id)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "email": l.Session.Email, "name": l.Session.Name,
		"payment_intent": l.Session.PaymentIntent, "status": l.Session.Status,
		"payment_status": l.Session.PaymentStatus, "order": s.orderView(l.Order)})
}

func (s orderHandlers) result(c *fiber.Ctx) error {
	svc, err := service(c)
	if err != nil {
		return err
	}
	var body struct {
		SessionID string `json:"sessionId"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if body.SessionID == "" {
		return fail("missing_session", "sessionId is required")
	}
	o, err := s.deps.Book.Cashier.Result(c.UserContext(), svc, body.SessionID)
	if err != nil {
		return err
	}
	view := s.orderView(o)
	s.addQueuePosition(c, o, view)
	switch o.Status {
	case orders.Done:
		return c.JSON(fiber.Map{"ok": true, "data": fiber.Map{"data": view["link"]}, "order": view})
	case orders.Failed, orders.Refunded:
		return failWithOrder(c, "order_refunded", view)
	case orders.Expired:
		return failWithOrder(c, "order_expired", view)
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"ok": true, "order": view})
}

// addQueuePosition tells a paid order waiting for a worker its place in the queue
// ("queuePosition", 1 = next); nothing when it is not waiting or the count fails.
func (s orderHandlers) addQueuePosition(c *fiber.Ctx, o orders.Order, view fiber.Map) {
	if o.Status != orders.Paid {
		return
	}
	p, err := s.deps.Book.QueuePosition(c.UserContext(), o)
	if err != nil {
		s.log.Warn("queue position", "order", o.ID, "err", err)
		return
	}
	if p > 0 {
		view["queuePosition"] = p
	}
}

// failWithOrder answers a failure of the result endpoint with the order beside the error,
// so the page can say what happened to it.
func failWithOrder(c *fiber.Ctx, code string, view fiber.Map) error {
	e := fail(code, "").(*apiError)
	body := errorBody(e)
	body["order"] = view
	return c.Status(e.kind.status).JSON(body)
}
