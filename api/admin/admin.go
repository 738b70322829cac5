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

	"parla/api/orders"
)

// Config is the admin area's configuration, from main.
type Config struct {
	PasswordHash string // ADMIN_PASSWORD_HASH: bcrypt; "" = no password sign-in
	Token        string // ADMIN_TOKEN: bearer token for scripts (and the form); "" = none
	// SessionTTL is how long a sign-in lasts (8 h).
	SessionTTL time.Duration
	// SignInPerMinute and SignInGlobalPerMinute bound sign-in attempts (and wrong bearer
	// tokens) per client address and for everyone (10 and 60).
	SignInPerMinute, SignInGlobalPerMinute int
	// Engines names the engine configured for each service, shown on an order's page.
	Engines map[orders.Service]string
	// ClientIP names the request's client (api.ClientIP, honouring TRUSTED_PROXIES).
	ClientIP func(c *fiber.Ctx) string
	// SecureCookies marks the session cookie Secure whatever the request says (PUBLIC_URL
	// is https); otherwise it is Secure when the request came over https.
	SecureCookies bool
	// Jobs is River's UI (NewJobsUI); nil leaves /admin/jobs out.
	Jobs http.Handler
	Log  *slog.Logger
	Now  func() time.Time
}

// Admin is the admin area.
type Admin struct {
	cfg     Config
	op      *orders.Operator
	keys    keys
	limiter *limiter
	pages   *pages
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
	return &Admin{cfg: cfg, op: op, keys: newKeys(cfg.PasswordHash, cfg.Token),
		limiter: newLimiter(cfg.SignInPerMinute, cfg.SignInGlobalPerMinute, time.Minute), pages: newPages()}
}

// Open reports whether the admin area accepts anyone (a password hash or a token is set).
func (a *Admin) Open() bool { return a.keys.open() }

// Mount adds /admin and everything under it to app. Without ADMIN_PASSWORD_HASH or
// ADMIN_TOKEN every admin path answers 404 with a page saying the area is closed.
func (a *Admin) Mount(app fiber.Router) {
	if !a.keys.open() {
		app.All("/admin", a.closed)
		app.All("/admin/*", a.closed)
		return
	}
	g := app.Group("/admin", a.headers)
	g.Get("/", func(c *fiber.Ctx) error { return c.Redirect("/admin/orders", fiber.StatusSeeOther) })
	g.Get("/sign-in", a.signInPage)
	g.Post("/sign-in", a.sameOrigin, a.signIn)
	g.Post("/sign-out", a.require, a.csrf, a.signOut)
	g.Get("/orders", a.require, a.orderList)
	g.Get("/orders/:id", a.require, a.orderPage)
	g.Post("/orders/:id/:action", a.require, a.csrf, a.action)
	g.Get("/audit", a.require, a.auditPage)
	if a.cfg.Jobs != nil {
		jobs := adaptor.HTTPHandler(a.cfg.Jobs)
		g.All("/jobs", a.require, a.sameOrigin, jobs)
		g.All("/jobs/*", a.require, a.sameOrigin, jobs)
	}
	g.All("/*", func(c *fiber.Ctx) error {
		return a.page(c.Status(fiber.StatusNotFound), "message", view{Title: "Not found", Message: "No such page in the admin area."})
	})
}

// Authorized reports whether the request carries the admin token (Authorization: Bearer)
// or a signed-in admin session: for /metrics and other operator-only answers.
func (a *Admin) Authorized(c *fiber.Ctx) bool {
	_, ok := a.who(c)
	return ok
}

const cookieName = "parla_admin"

// who is the signed-in operator of a request: a valid bearer token, or a session cookie.
func (a *Admin) who(c *fiber.Ctx) (session, bool) {
	if !a.keys.open() {
		return session{}, false
	}
	if tok, ok := bearer(c); ok {
		if a.keys.tokenOK(tok) {
			return session{Who: "token"}, true
		}
		return session{}, false
	}
	s, err := a.keys.parseCookie(c.Cookies(cookieName), a.cfg.Now())
	return s, err == nil
}

func bearer(c *fiber.Ctx) (string, bool) {
	h := c.Get(fiber.HeaderAuthorization)
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", h != ""
}

func (a *Admin) headers(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Frame-Options", "DENY")
	c.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(c.Path(), "/admin/jobs") {
		c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	}
	return c.Next()
}

// wantsJSON: scripts (bearer) and Accept: application/json get JSON.
func wantsJSON(c *fiber.Ctx) bool {
	if _, ok := bearer(c); ok {
		return true
	}
	return strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON)
}

// require lets signed-in operators and the token through; a wrong token counts as a
// failed sign-in attempt.
func (a *Admin) require(c *fiber.Ctx) error {
	s, ok := a.who(c)
	if ok {
		c.Locals("admin", s)
		return c.Next()
	}
	if _, hasBearer := bearer(c); hasBearer {
		if !a.limiter.allow(a.cfg.ClientIP(c), a.cfg.Now()) {
			return a.refuse(c, fiber.StatusTooManyRequests, "rate_limited", "Too many attempts; wait a minute.")
		}
		return a.refuse(c, fiber.StatusUnauthorized, "unauthorized", "The token is not valid.")
	}
	if wantsJSON(c) || c.Method() != fiber.MethodGet {
		return a.refuse(c, fiber.StatusUnauthorized, "unauthorized", "Sign in first.")
	}
	return c.Redirect("/admin/sign-in", fiber.StatusSeeOther)
}

func current(c *fiber.Ctx) session {
	s, _ := c.Locals("admin").(session)
	return s
}

// csrf checks a signed-in session's token on every state-changing request; bearer
// requests carry no cookie and need none.
func (a *Admin) csrf(c *fiber.Ctx) error {
	s := current(c)
	if s.Nonce == "" { // the token, not a cookie
		return c.Next()
	}
	if !a.keys.csrfOK(s, c.FormValue("csrf")) {
		return a.refuse(c, fiber.StatusForbidden, "csrf_invalid", "The form has expired or did not come from this site; reload the page and try again.")
	}
	return c.Next()
}

// sameOrigin guards River's UI and the sign-in form: River's API changes jobs with JSON
// requests and knows nothing of our CSRF tokens, and a sign-in has no session yet to tie a
// token to, so a state-changing browser request must come from our own pages (Origin, or
// Sec-Fetch-Site). The SameSite=Strict cookie already keeps other sites' requests out of
// River's UI; this holds if a browser ignores it, and stops a forged sign-in.
func (a *Admin) sameOrigin(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	if _, hasBearer := bearer(c); hasBearer {
		return c.Next() // a script: no cookie rides along
	}
	if site := c.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return a.refuse(c, fiber.StatusForbidden, "csrf_invalid", "Cross-site request refused.")
	}
	if origin := c.Get(fiber.HeaderOrigin); origin != "" && origin != c.BaseURL() {
		return a.refuse(c, fiber.StatusForbidden, "csrf_invalid", "Cross-site request refused.")
	}
	return c.Next()
}

func (a *Admin) refuse(c *fiber.Ctx, status int, code, message string) error {
	if wantsJSON(c) || strings.HasPrefix(c.Path(), "/admin/jobs") {
		return c.Status(status).JSON(fiber.Map{"ok": false, "error": fiber.Map{"code": code, "message": message}})
	}
	return a.page(c.Status(status), "message", view{Title: http.StatusText(status), Message: message})
}

func (a *Admin) closed(c *fiber.Ctx) error {
	return a.page(c.Status(fiber.StatusNotFound), "message", view{Title: "The admin area is closed",
		Message: "Set ADMIN_PASSWORD_HASH (made with `parla hash-password`) or ADMIN_TOKEN to open it.", Closed: true})
}

func (a *Admin) signInPage(c *fiber.Ctx) error {
	if _, ok := a.who(c); ok {
		return c.Redirect("/admin/orders", fiber.StatusSeeOther)
	}
	return a.page(c, "signin", view{Title: "Sign in"})
}

func (a *Admin) signIn(c *fiber.Ctx) error {
	ip := a.cfg.ClientIP(c)
	if !a.limiter.allow(ip, a.cfg.Now()) {
		return a.refuse(c, fiber.StatusTooManyRequests, "rate_limited", "Too many sign-in attempts; wait a minute.")
	}
	who, ok := a.keys.signIn(c.FormValue("password"))
	result := "ok"
	if !ok {
		who, result = "anonymous", "refused: wrong password"
	}
	if err := a.op.Record(c.UserContext(), orders.Actor{Who: who, IP: ip}, "sign_in", result); err != nil {
		a.cfg.Log.Error("recording a sign-in", "err", err)
	}
	if !ok {
		if wantsJSON(c) {
			return a.refuse(c, fiber.StatusUnauthorized, "unauthorized", "Wrong password.")
		}
		return a.page(c.Status(fiber.StatusUnauthorized), "signin", view{Title: "Sign in", Message: "Wrong password."})
	}
	s := session{Who: who, Nonce: randomToken(), Expires: a.cfg.Now().Add(a.cfg.SessionTTL)}
	c.Cookie(a.sessionCookie(c, a.keys.cookie(s), s.Expires))
	return c.Redirect("/admin/orders", fiber.StatusSeeOther)
}

func (a *Admin) sessionCookie(c *fiber.Ctx, value string, expires time.Time) *fiber.Cookie {
	return &fiber.Cookie{Name: cookieName, Value: value, Path: "/admin", Expires: expires,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: a.cfg.SecureCookies || c.Protocol() == "https"}
}

func (a *Admin) signOut(c *fiber.Ctx) error {
	c.Cookie(a.sessionCookie(c, "", time.Unix(1, 0)))
	return c.Redirect("/admin/sign-in", fiber.StatusSeeOther)
}

// notFoundOrder answers a missing order.
func (a *Admin) orderError(c *fiber.Ctx, err error) error {
	if errors.Is(err, orders.ErrNotFound) {
		return a.refuse(c, fiber.StatusNotFound, "not_found", "No such order.")
	}
	a.cfg.Log.Error("admin", "path", c.Path(), "err", err)
	return a.refuse(c, fiber.StatusInternalServerError, "internal", "Something went wrong; see the log.")
}
