// Package admin is the operator's area under /admin: sign-in (password or token), the
// order search and each order's timeline, the audited actions (resend, retry, refund,
// extend) and River's own UI under /admin/jobs. Server-rendered English HTML, JSON for
// scripts. The order book's side is api/orders (operator.go); this package only speaks HTTP.
package admin

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"parla/api/credit"
	"parla/api/orders"
)

// Config is the admin area's configuration, from main.
type Config struct {
	PasswordHash string // ADMIN_PASSWORD_HASH: bcrypt; "" = no password sign-in
	Token        string // ADMIN_TOKEN: bearer token for scripts (and the form); "" = none
	// SessionKey is ADMIN_SESSION_KEY, mixed into the key sessions are signed with (the
	// stored random secret's); "" = the stored secret alone.
	SessionKey string
	// SessionTTL is how long a sign-in lasts (8 h).
	SessionTTL time.Duration
	// SignInPerMinute and SignInGlobalPerMinute bound sign-in attempts (and wrong bearer
	// tokens) per client address and for everyone (10 and 60).
	SignInPerMinute, SignInGlobalPerMinute int
	// PasswordChecked, when set, hears every password check the sign-in form runs (each
	// one bcrypt comparison), inside its turn (tests count them).
	PasswordChecked func()
	// Engines names the engine configured for each service, shown on an order's page.
	Engines map[orders.Service]string
	// Closed says which services cannot take orders now and why (with what opens them); nil
	// when the node has no such view. The orders page shows it first.
	Closed func() map[orders.Service]string
	// ClientIP names the request's client (api.ClientIP, honouring TRUSTED_PROXIES).
	ClientIP func(c *fiber.Ctx) string
	// SecureCookies marks the session cookie Secure whatever the request says (PUBLIC_URL
	// is https); otherwise it is Secure when the request came over https.
	SecureCookies bool
	// Jobs is River's UI (NewJobsUI); nil leaves /admin/jobs out.
	Jobs http.Handler
	// Keys are the API's keys (api/credit); nil leaves /admin/keys out.
	Keys *credit.Keyring
	Log  *slog.Logger
	Now  func() time.Time
}

// Admin is the admin area: its pages and the operator's actions, behind its door (sign-in,
// sessions, CSRF: door.go).
type Admin struct {
	cfg   Config
	op    *orders.Operator
	door  *door
	pages *pages
}

// New builds the admin area over the order book's operator side.
func New(cfg Config, op *orders.Operator) *Admin {
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 8 * time.Hour
	}
	if cfg.SignInPerMinute <= 0 {
		cfg.SignInPerMinute = 10
	}
	if cfg.SignInGlobalPerMinute <= 0 {
		cfg.SignInGlobalPerMinute = 60
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = func(c *fiber.Ctx) string { return c.IP() }
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Admin{cfg: cfg, op: op, pages: newPages(cfg.Log)}
	a.door = newDoor(&a.cfg, op, a.pages)
	return a
}

// Open reports whether the admin area accepts anyone (a password hash or a token is set).
func (a *Admin) Open() bool { return a.door.keys.open() }

// Mount adds /admin and everything under it to app. Without ADMIN_PASSWORD_HASH or
// ADMIN_TOKEN every admin path answers 404 with a page saying the area is closed.
func (a *Admin) Mount(app fiber.Router) {
	if !a.Open() {
		app.All("/admin", a.closed)
		app.All("/admin/*", a.closed)
		return
	}
	d := a.door
	g := app.Group("/admin", headers)
	g.Get("/", func(c *fiber.Ctx) error { return c.Redirect("/admin/orders", fiber.StatusSeeOther) })
	g.Get("/sign-in", d.signInPage)
	g.Post("/sign-in", d.sameOrigin, d.signIn)
	g.Post("/sign-out", d.require, d.csrf, d.signOut)
	g.Post("/sign-out-everyone", d.require, d.csrf, d.signOutEveryone)
	g.Get("/orders", d.require, a.orderList)
	g.Get("/orders/:id", d.require, a.orderPage)
	g.Post("/orders/:id/:action", d.require, d.csrf, a.action)
	g.Get("/audit", d.require, a.auditPage)
	if a.cfg.Keys != nil {
		g.Get("/keys", d.require, a.keyList)
		g.Post("/keys/:id/:action", d.require, d.csrf, a.keyAction)
	}
	if a.cfg.Jobs != nil {
		jobs := adaptor.HTTPHandler(a.cfg.Jobs)
		g.All("/jobs", d.require, d.sameOrigin, jobs)
		g.All("/jobs/*", d.require, d.sameOrigin, jobs)
	}
	g.All("/*", func(c *fiber.Ctx) error {
		return a.pages.page(c.Status(fiber.StatusNotFound), "message", view{Title: "Not found", Message: "No such page in the admin area."})
	})
}

// Authorized reports whether the request carries the admin token (Authorization: Bearer)
// or a signed-in admin session: for /metrics, /readyz's reasons and other operator-only
// answers. A wrong token counts toward a limit of failed attempts of their own (as many as
// the sign-in's), never the sign-in's: a flood of bad tokens there cannot lock the
// operator out of /admin. Past it even the right token is refused from that address until
// the minute ends.
func (a *Admin) Authorized(c *fiber.Ctx) bool {
	_, ok, _ := a.door.whoCounted(c, a.door.opsLimiter)
	return ok
}

func headers(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Frame-Options", "DENY")
	c.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(c.Path(), "/admin/jobs") {
		c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'self'; frame-ancestors 'none'")
	} else {
		// River's UI: its own files, its scripts from this site only; its styles as it makes them.
		c.Set(fiber.HeaderContentSecurityPolicy, "script-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'")
	}
	return c.Next()
}

func (a *Admin) closed(c *fiber.Ctx) error {
	return a.pages.page(c.Status(fiber.StatusNotFound), "message", view{Title: "The admin area is closed",
		Message: "Set ADMIN_PASSWORD_HASH (made with `parla hash-password`) or ADMIN_TOKEN to open it.", Closed: true})
}

// orderError answers a missing order, or logs and answers a failure.
func (a *Admin) orderError(c *fiber.Ctx, err error) error {
	if errors.Is(err, orders.ErrNotFound) {
		return a.pages.refuse(c, fiber.StatusNotFound, "not_found", "No such order.")
	}
	return a.pages.failed(c, "admin "+c.Path(), err)
}
