// Package v1 is Parla from code: an OpenAI-compatible API under /v1 (models, speech,
// transcriptions, translations, the key's credit) paid per call from prepaid credit
// (api/credit), and the two site routes that sell that credit. Engines, prices, text and
// upload rules are the site's own (api/orders); errors are in OpenAI's shape.
package v1

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/limiter"

	"parla/api/credit"
	"parla/api/orders"
	"parla/media"
	"parla/providers"
)

// Config bounds the API.
type Config struct {
	// RateLimit is RATE_LIMIT: the API allows four times as many calls a minute, per key
	// and per client; 0 turns the limits off, as it does the site's.
	RateLimit      int
	MaxUploadBytes int64 // the largest file a transcription takes (25 MB)
	MaxInput       int64 // the longest text a speech call takes (4,096 characters)
	TempDir        string
	// MaxTranscription is API_MAX_TRANSCRIPTION: the longest file one transcription takes
	// (DefaultMaxTranscription).
	MaxTranscription time.Duration
}

// Deps are what the handlers call.
type Deps struct {
	Credit      *credit.Credit
	Desk        *orders.Desk   // which services are open, a text's language, translation
	Intake      *orders.Intake // the site's bounded measure of a file
	Pricing     orders.Pricing
	Speaker     providers.Speaker
	Transcriber providers.Transcriber
	Media       *media.Runner // an engine's FLAC made wav or pcm
	// ClientOf names a request's client as the site's limits count it (api.ClientKeyOf).
	ClientOf func(c *fiber.Ctx) string
	// Observe, when set, hears of every charged call: its model and what it cost
	// (thousandths of a cent), for the metrics.
	Observe func(model string, milli int64)
	Log     *slog.Logger
}

// API serves /v1 and the credit's checkout.
type API struct {
	cfg      Config
	deps     Deps
	measures *measureBounds
}

// New fills Config's defaults.
func New(cfg Config, deps Deps) *API {
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 25 << 20
	}
	if cfg.MaxInput <= 0 {
		cfg.MaxInput = 4096
	}
	if cfg.MaxTranscription <= 0 {
		cfg.MaxTranscription = DefaultMaxTranscription
	}
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	return &API{cfg: cfg, deps: deps, measures: newMeasureBounds(deps.Pricing.Rules[orders.STT], cfg.MaxTranscription)}
}

// UploadPaths are the routes whose bodies are files, read as streams by their handler
// (the app's JSON body limit does not apply to them).
var UploadPaths = []string{"/v1/audio/transcriptions", "/v1/audio/translations"}

// Mount adds the routes; the app mounts them before its own /services/:service.
func (a *API) Mount(app *fiber.App) {
	app.Post("/payment/credit/create-checkout-session", a.limit(1, a.deps.ClientOf, siteLimited), a.createCheckout)
	// The key page polls every 1.5 s (40 a minute): 4 × RATE_LIMIT a minute per client.
	app.Post("/services/credit", a.limit(4, a.deps.ClientOf, siteLimited), a.creditResult)
	app.Get("/api/credit/config", a.creditConfig)

	v1 := app.Group("/v1", a.limit(4, a.deps.ClientOf, rateLimited), a.authenticate, a.limit(4, keyOf, rateLimited))
	v1.Get("/models", a.listModels)
	v1.Get("/models/:id", a.retrieveModel)
	v1.Get("/credit", a.balance)
	v1.Post("/audio/speech", a.speech)
	v1.Post("/audio/transcriptions", a.transcribe(false))
	v1.Post("/audio/translations", a.transcribe(true))
	app.All("/v1/*", func(c *fiber.Ctx) error {
		return send(c, &apiError{status: 404, typ: invalidRequest, code: "unknown_url",
			message: "Unknown request URL: " + c.Method() + " " + c.Path()})
	})
}

// limit is a bucket of n × RateLimit requests a minute per key, answered by refuse.
func (a *API) limit(n int, key func(*fiber.Ctx) string, refuse fiber.Handler) fiber.Handler {
	if a.cfg.RateLimit <= 0 {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	return limiter.New(limiter.Config{Max: n * a.cfg.RateLimit, Expiration: time.Minute, KeyGenerator: key, LimitReached: refuse})
}

func rateLimited(c *fiber.Ctx) error {
	return send(c, &apiError{status: 429, typ: "requests", code: "rate_limit_exceeded",
		message: "Rate limit reached: too many requests a minute; try again in a minute."})
}

// siteLimited is the site's own refusal (its error table's rate_limited).
func siteLimited(*fiber.Ctx) error { return fiber.ErrTooManyRequests }
