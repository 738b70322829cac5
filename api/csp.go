package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Every page the server sends carries a Content-Security-Policy and X-Frame-Options: no
// page may be framed (a framed Pay, Delete now or editor could be clicked through a
// disguise), no plugin runs, no <base> moves the page's links, and scripts run only from
// this site's own files or, on the link page, by their hash. The React app's index.html
// holds no executable inline script: Vite writes the entry as a file, and the config the
// server inlines is a type="application/json" element, which a browser does not run.
// Pages with their own needs set their own policy (the link page: pagePolicy; the test
// checkout: testCheckoutPolicy; the admin area: api/admin); framePolicy gives the rest
// the app's.

// appPolicy is the React app's policy (every SPA page, the editor included). Its sources
// are the ones the app uses: its scripts, styles, fonts and images from this site; API
// calls to this site; audio and video from this site, from blob: (the preview's audio,
// a chosen file's length, the editor's own recording) and, in the editor, from any link
// the visitor pastes; Stripe.js in stripe mode, which the app loads when the visitor
// pays (script, its frames, its API), per Stripe's list of what it needs.
func appPolicy(paymentMode string) string {
	script, connect, frame := "'self'", "'self'", "'none'"
	if paymentMode == "stripe" {
		script += " https://js.stripe.com https://*.js.stripe.com"
		connect += " https://api.stripe.com"
		frame = "https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com"
	}
	return strings.Join([]string{
		"default-src 'self'",
		"script-src " + script,
		"style-src 'self'",
		"img-src 'self' data:",
		"media-src 'self' blob: http: https:",
		"connect-src " + connect,
		"frame-src " + frame,
		"object-src 'none'",
		"base-uri 'self'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}, "; ")
}

// testCheckoutPolicy is the built-in test checkout page's: its inline style, the
// product's image (an absolute address from PUBLIC_URL), no script, its forms posting
// here.
const testCheckoutPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' http: https:; " +
	"object-src 'none'; base-uri 'self'; frame-ancestors 'none'"

// framePolicy forbids framing every answer, and gives an HTML page that set no policy of
// its own the app's.
func framePolicy(app string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderXFrameOptions, "DENY")
		err := c.Next()
		res := &c.Response().Header
		if len(res.Peek(fiber.HeaderContentSecurityPolicy)) == 0 &&
			strings.HasPrefix(strings.ToLower(string(res.ContentType())), fiber.MIMETextHTML) {
			res.Set(fiber.HeaderContentSecurityPolicy, app)
		}
		return err
	}
}
