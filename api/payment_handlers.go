package api

import (
	"errors"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
	"parla/providers/stripe"
)

// The built-in test checkout stands in for Stripe's hosted page when no Stripe key is
// configured, so the whole product works on a fresh machine.

func (s paymentHandlers) testSession(c *fiber.Ctx) (stripe.TestSession, error) {
	if s.deps.Test == nil {
		return stripe.TestSession{}, fail("not_found", "the test checkout is off: real payments are configured")
	}
	return s.deps.Test.Get(c.UserContext(), c.Params("id"))
}

func (s paymentHandlers) testCheckoutPage(c *fiber.Ctx) error {
	ts, err := s.testSession(c)
	if err != nil {
		return err
	}
	c.Type("html", "utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentSecurityPolicy, testCheckoutPolicy)
	return stripe.RenderPage(c, ts)
}

func (s paymentHandlers) testCheckoutPay(c *fiber.Ctx) error {
	if _, err := s.testSession(c); err != nil {
		return err
	}
	ctx := c.UserContext()
	successURL, err := s.deps.Test.Pay(ctx, c.Params("id"))
	if err != nil {
		return s.backToTestPage(c, err)
	}
	// Tell the order book at once, as Stripe's webhook would.
	ts, err := s.deps.Test.Get(ctx, c.Params("id"))
	if err != nil {
		return err
	}
	ev := orders.PaymentEvent{ID: "evt_test_" + ts.ID, Type: stripe.EventCheckoutCompleted, Session: ts.Checkout()}
	if err := s.deps.Book.Cashier.HandleEvent(ctx, ev); err != nil && !errors.Is(err, orders.ErrDuplicateEvent) {
		return err
	}
	return c.Redirect(successURL, fiber.StatusSeeOther)
}

func (s paymentHandlers) testCheckoutCancel(c *fiber.Ctx) error {
	if _, err := s.testSession(c); err != nil {
		return err
	}
	cancelURL, err := s.deps.Test.Cancel(c.UserContext(), c.Params("id"))
	if err != nil {
		return s.backToTestPage(c, err)
	}
	return c.Redirect(cancelURL, fiber.StatusSeeOther)
}

// backToTestPage answers a browser whose Pay or Cancel came too late (the session expired,
// was replaced by a second tab's checkout, or is already paid) with the session's own page,
// which says so in the visitor's language and links onwards; API clients keep the JSON
// error.
func (s paymentHandlers) backToTestPage(c *fiber.Ctx, err error) error {
	late := errors.Is(err, stripe.ErrSessionExpired) || errors.Is(err, stripe.ErrSessionPaid)
	if !late || !wantsHTML(c) {
		return err
	}
	return c.Redirect(TestCheckoutPrefix+url.PathEscape(c.Params("id")), fiber.StatusSeeOther)
}

func (s paymentHandlers) stripeWebhook(c *fiber.Ctx) error {
	if s.deps.Webhooks == nil {
		return fail("not_found", "Stripe is not configured")
	}
	ev, err := s.deps.Webhooks.ParseWebhook(c.Body(), c.Get("Stripe-Signature"))
	if err != nil {
		return err
	}
	err = s.deps.Book.Cashier.HandleEvent(c.UserContext(), orders.PaymentEvent{ID: ev.ID, Type: ev.Type, Session: ev.Session,
		PaymentIntent: ev.PaymentIntent})
	if errors.Is(err, orders.ErrDuplicateEvent) {
		return c.JSON(fiber.Map{"ok": true, "duplicate": true})
	}
	if err != nil {
		return err // 500: Stripe retries, and the event was forgotten so the retry counts
	}
	return c.JSON(fiber.Map{"ok": true})
}
