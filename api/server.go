// Package api is Parla's HTTP face: routes, short handlers (decode → validate → call →
// encode), the mapping of errors to JSON, the built-in test checkout pages, download links
// and the link page a letter gives, free previews and voice samples, /readyz, the guarded
// listener, and the React app with its SPA fallback.
package api

import (
	"context"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/gofiber/fiber/v2/middleware/requestid"

	"parla/api/health"
	"parla/api/orders"
	"parla/providers"
	"parla/providers/stripe"
)

// Config is the HTTP layer's configuration.
type Config struct {
	Version        string   // shown in the footer (v3.3.2)
	PaymentMode    string   // "test" (built-in checkout) or "stripe"
	PublishableKey string   // Stripe.js key, stripe mode only
	ContactEmail   string   // the footer's contact address
	RateLimit      int      // checkout creations, uploads, analyses, and session lookups per client per minute; 0 = unlimited
	TrustedProxies []string // proxies whose X-Forwarded-For is believed
	SamplesDir     string   // cache of generated voice samples
	PreviewsDir    string   // cache of free text-to-speech previews (bounded in size)
	BodyLimit      int      // largest JSON body accepted (bytes; DefaultBodyLimit)
	MaxUploadBytes int64    // largest audio upload (DefaultMaxUploadBytes)
	STTEngine      string   // "whisper" or "openai", named on the audio page
	PublicURL      string   // how visitors reach us: canonical, hreflang and og:url addresses
	// StreamedPaths are further routes whose bodies are files their handler reads as a
	// stream, past BodyLimit (the API's transcriptions, api/v1).
	StreamedPaths []string
}

// The defaults of Config's zero fields; the server's configuration (the root's config.go)
// reads UPLOAD_MAX_BYTES over the same constant.
const (
	DefaultBodyLimit      = 1 << 20
	DefaultMaxUploadBytes = 25 << 20
)

// Deps are what the handlers call.
type Deps struct {
	Book     *orders.Book
	Storage  providers.Storage
	Speaker  providers.Speaker // for voice samples; may be nil
	Test     *stripe.TestCheckout
	Webhooks providers.WebhookParser // nil in test-checkout mode
	UI       fs.FS                   // the built React app (index.html at its root); may be empty
	Locales  fs.FS                   // the UI's locales (<id>/translation.json) for server-rendered metadata; may be nil
	Log      *slog.Logger
	// Operations (ops.go): Ready answers /readyz (nil: always ready); Count runs around
	// every request (the HTTP metrics; nil: none); Metrics serves /metrics to requests
	// Authorized lets through (nil: /metrics is not served here).
	Ready      func(ctx context.Context) health.Report
	Count      fiber.Handler
	Metrics    fiber.Handler
	Authorized func(c *fiber.Ctx) bool
	// Admin, when set, adds the admin area's routes (api/admin, wired in main) before the
	// app's fallbacks.
	Admin func(app *fiber.App)
	// API, when set, adds Parla from code (api/v1: /v1 and the credit's checkout) before
	// the order journey's routes.
	API func(app *fiber.App)
}

// server holds what the handlers share; the routes of the order journey
// (order_handlers.go, transcript_handlers.go) and of payments (payment_handlers.go) are
// methods of small types around it.
type server struct {
	cfg      Config
	deps     Deps
	log      *slog.Logger
	samples  *sampleCache
	previews *previewCache
	pages    *pageRenderer // nil without locales: index.html is served as built
	// clientOf names a request's client as every limit counts it (ClientKeyOf): its IPv4
	// address, or its IPv6 /64.
	clientOf func(c *fiber.Ctx) string
	renders  renderCache // rendered downloads (render_cache.go)
}

// orderHandlers serve the order journey: uploads and link analysis, checkout creation, the
// session lookup and the result.
type orderHandlers struct{ *server }

// paymentHandlers serve the payment provider's side: the built-in test checkout's pages
// and Stripe's webhook.
type paymentHandlers struct{ *server }

// editorHandlers serve the transcript editor of a delivered order's link (editor.go).
type editorHandlers struct{ *server }

// linkHandlers serve a delivered order's link: its file (/d/{token}, download.go; other
// formats rendered through render_cache.go) and its page (/r/{token}, linkpage.go: the
// countdown, the formats, "delete now").
type linkHandlers struct{ *server }

// New builds the Fiber app with every route.
func New(cfg Config, deps Deps) *fiber.App {
	s := newServer(cfg, deps)
	app := s.newApp()
	s.routes(app)
	return app
}

// uploadRoute takes uploads, streamed: the one route whose body is not limited to BodyLimit.
const uploadRoute = "/services/sst/uploadaudio"

// newServer fills the settings' defaults and builds the server's own parts: the sample
// and preview caches, the pages' renderer.
func newServer(cfg Config, deps Deps) *server {
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	s := &server{cfg: cfg, deps: deps, log: deps.Log, clientOf: ClientKeyOf(cfg.TrustedProxies)}
	s.samples = newSampleCache(cfg.SamplesDir, deps.Speaker)
	s.previews = newPreviewCache(cfg.PreviewsDir, deps.Speaker)
	if deps.Locales != nil {
		info := siteInfo{Contact: cfg.ContactEmail, Version: cfg.Version}
		if deps.Book != nil {
			bc := deps.Book.Config()
			info.Retention = NewRetention(bc.LinkTTL, bc.UploadTTL, bc.UnpaidTTL, bc.CheckoutTTL)
		}
		pages, err := newPageRenderer(cfg.PublicURL, deps.Locales, info)
		if err != nil {
			deps.Log.Error("pages are served without their metadata", "err", err)
		}
		if pages != nil {
			pages.preloads = readPreloads(deps.UI)
		}
		s.pages = pages
	}
	return s
}

// newApp is the Fiber app with its settings (body limits, timeouts, proxies, errors) and
// the middleware every request passes.
func (s *server) newApp() *fiber.App {
	cfg, deps := s.cfg, s.deps
	app := fiber.New(fiber.Config{
		AppName: "parla",
		// Bodies above BodyLimit, and chunked ones, reach the handlers as streams: the
		// upload reads its own with a limit, limitBody reads the others up to BodyLimit.
		BodyLimit:                    cfg.BodyLimit,
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		// Headers and small bodies must arrive within seconds, and an idle keep-alive
		// connection is closed as quickly: a socket that sends nothing holds nothing for
		// long. An upload's body keeps its connection while bytes keep coming (see
		// uploadIdle); results are written within WriteTimeout.
		ReadTimeout:             30 * time.Second,
		WriteTimeout:            5 * time.Minute,
		IdleTimeout:             15 * time.Second,
		ErrorHandler:            errorHandler(deps.Log),
		DisableStartupMessage:   true,
		ProxyHeader:             proxyHeader(cfg.TrustedProxies),
		EnableTrustedProxyCheck: len(cfg.TrustedProxies) > 0,
		TrustedProxies:          cfg.TrustedProxies,
	})
	app.Use(closeUnreadBody, recover.New())
	app.Use(func(c *fiber.Ctx) error {
		// Files are served as the type we say, never as what a browser guesses from them.
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		return c.Next()
	})
	// No answer may be framed; pages get a Content-Security-Policy (csp.go).
	app.Use(framePolicy(appPolicy(cfg.PaymentMode)))
	app.Use(requestid.New())
	app.Use(untrustedProxyWarning(cfg.TrustedProxies, deps.Log))
	if deps.Count != nil {
		app.Use(deps.Count)
	}
	app.Use(s.accessLog)
	app.Use(func(c *fiber.Ctx) error {
		if c.Path() == uploadRoute || slices.Contains(cfg.StreamedPaths, c.Path()) {
			return c.Next()
		}
		return s.limitBody(c)
	})
	return app
}

func proxyHeader(trusted []string) string {
	if len(trusted) == 0 {
		return ""
	}
	return fiber.HeaderXForwardedFor
}

func notFound(c *fiber.Ctx) error {
	return fail("not_found", "no such endpoint")
}

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(requestid.ConfigDefault.ContextKey).(string)
	return id
}

// accessLog logs one line per request: no query strings, bodies or addresses.
func (s *server) accessLog(c *fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	if err != nil {
		return err // the error handler logs it
	}
	if c.Path() == "/healthz" || c.Path() == "/readyz" || c.Path() == "/metrics" || strings.HasPrefix(c.Path(), "/assets/") {
		return nil
	}
	s.log.Debug("request", "request", requestID(c), "method", c.Method(), "route", c.Route().Path,
		"status", c.Response().StatusCode(), "took", time.Since(start).Round(time.Microsecond))
	return nil
}

func (s *server) rateLimit() fiber.Handler { return s.rateLimitTimes(1) }

// rateLimitTimes is a bucket of its own allowing n times RateLimit requests a minute.
func (s *server) rateLimitTimes(n int) fiber.Handler {
	if s.cfg.RateLimit <= 0 {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	return limiter.New(limiter.Config{
		Max:          n * s.cfg.RateLimit,
		Expiration:   time.Minute,
		KeyGenerator: s.clientOf,
		LimitReached: func(c *fiber.Ctx) error {
			return fail("rate_limited", "too many requests; try again in a minute")
		},
	})
}

// service reads the :service route parameter.
func service(c *fiber.Ctx) (orders.Service, error) {
	svc := orders.Service(c.Params("service"))
	if !svc.Valid() {
		return "", notFound(c)
	}
	return svc, nil
}
