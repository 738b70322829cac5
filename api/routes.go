package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/compress"

	"parla/api/orders"
)

// The addresses of a delivered order: its file and its link page, before the link token.
const (
	downloadPrefix = "/d/"
	pagePrefix     = "/r/"
)

// The /api page (API credit) and its confirmation, where the credit's checkout returns.
const (
	CreditPage    = "/api"
	CreditSuccess = "/api-payment/success"
)

// TestCheckoutPrefix is where the built-in test checkout's pages are, before a session's id.
const TestCheckoutPrefix = "/checkout/test/"

// OrderRoutes are the site's addresses the order book hands out (checkout returns, links
// in letters): the book builds no route.
func OrderRoutes() orders.Routes {
	return orders.Routes{
		Success:  map[orders.Service]string{orders.TTS: "/payment/success", orders.STT: "/sst-payment/success", orders.VTT: "/vtt-payment/success"},
		Cancel:   map[orders.Service]string{orders.TTS: "/tts", orders.STT: "/sst", orders.VTT: "/vtt"},
		Download: downloadPrefix,
		Page:     pagePrefix,
	}
}

// routes mounts every route of the API, the pages and the app on app.
func (s *server) routes(app *fiber.App) {
	deps := s.deps
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"ok": true}) })
	app.Get("/readyz", s.ready)
	app.Get("/metrics", s.metrics)
	app.Get("/api/config", s.publicConfig)
	app.Get("/api/tts/samples/:voice", s.voiceSample)
	if deps.API != nil {
		deps.API(app) // before /services/:service: /services/credit is the API's
	}

	// Checkout creations of the three services share a bucket; uploads and link analyses
	// have one each (README: RATE_LIMIT), so a visitor's uploads do not use up their checkouts.
	checkouts := s.rateLimit()
	o, p := orderHandlers{s}, paymentHandlers{s}
	app.Post("/payment/tts/create-checkout-session", checkouts, o.createTTSCheckout)
	// The page asks for a quote as the visitor types (debounced): its own bucket, four
	// times as generous, since detecting the language of a long text costs CPU (~33 ms for
	// 100,000 characters).
	app.Post("/api/tts/quote", s.rateLimitTimes(4), o.quoteTTS)
	// A free preview costs engine time (~0.1 s with espeak-ng): a bucket of its own, as
	// generous as the checkouts; repeated previews are served from the cache.
	app.Post("/api/tts/preview", s.rateLimit(), o.ttsPreview)
	app.Post("/payment/sst/create-checkout-session", checkouts, o.createSTTCheckout)
	app.Post("/payment/vtt/create-checkout-session", checkouts, o.createVTTCheckout)
	// The lookup asks the payment provider each time: its own bucket, as generous as the
	// others (a confirmation page asks once per load). The result polling is not limited.
	app.Get("/payment/:service/checkout-session", s.rateLimit(), o.lookupSession)
	app.Get("/payment/:service/order", s.rateLimit(), o.orderByKey)
	app.Post(uploadRoute, s.rateLimit(), o.uploadAudio)
	// A link's preview analyses the link again when its analysis is no longer remembered:
	// it shares the analyses' bucket, so it is no way around it.
	analyses := s.rateLimit()
	app.Post("/services/vtt/analyzevideo", analyses, o.analyzeVideo)
	app.Post("/services/vtt/preview", analyses, o.vttPreview)
	// An upload's preview: a bucket of its own, four times as generous, since the page asks
	// again while it is made (each request waits up to previewAnswerWait for the answer).
	app.Post("/services/sst/preview", s.rateLimitTimes(4), o.sttPreview)
	app.Post("/services/:service", o.result)

	app.Get(TestCheckoutPrefix+":id", p.testCheckoutPage)
	app.Post(TestCheckoutPrefix+":id/pay", p.testCheckoutPay)
	app.Post(TestCheckoutPrefix+":id/cancel", p.testCheckoutCancel)

	app.Post("/webhooks/stripe", p.stripeWebhook)
	l := linkHandlers{s}
	app.Get(downloadPrefix+":token", l.download)
	app.Post(downloadPrefix+":token", l.download)
	app.Get(pagePrefix+":token", l.linkPage)
	app.Post(pagePrefix+":token/delete", l.eraseNow)
	// The transcript editor (editor.go): a bucket of its own, four times as generous as
	// the checkouts, since every opening and every save counts.
	edits := s.rateLimitTimes(4)
	ed := editorHandlers{s}
	app.Get("/r/:token/transcript", edits, ed.editorTranscript)
	app.Put("/r/:token/transcript", edits, ed.saveTranscript)
	app.Delete("/r/:token/transcript", edits, ed.revertTranscript)
	app.Get("/r/:token/edit", edits, ed.editorPage)
	app.Get("/:lang/r/:token/edit", edits, ed.editorPage)

	if deps.Admin != nil {
		deps.Admin(app)
	}
	// API paths answer JSON 404s; /payment/success and /payment/error are pages of the app,
	// so only non-GET requests under /payment and /checkout are API misses.
	app.Get("/api", compress.New(), s.spa) // the page of Parla from code, which /api/* would swallow
	for _, prefix := range []string{"/api", "/services", "/webhooks", "/d"} {
		app.All(prefix+"/*", notFound)
	}
	for _, prefix := range []string{"/payment", "/checkout"} {
		for _, m := range []string{fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch, fiber.MethodDelete} {
			app.Add(m, prefix+"/*", notFound)
		}
	}
	// Compression for the app's files only: results are audio and already compressed.
	app.Use(compress.New(), s.spa)
}
