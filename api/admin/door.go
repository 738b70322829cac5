package admin

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
)

// door is the admin area's way in: sign-in and sign-out, sessions, the bearer token, CSRF
// and same-origin checks, and the limit on failed attempts. The pages and actions behind
// it are Admin's.
type door struct {
	cfg      *Config
	op       *orders.Operator
	keys     keys
	sessions *sessionKeys
	devices  *sessionKeys // the device cookies' signer (door_guard.go)
	limiter  *limiter
	// opsLimiter counts the wrong tokens sent to /metrics and /readyz (Authorized): a
	// flood there is refused on its own and never counts against the sign-in.
	opsLimiter *limiter
	guard      *guard
	pages      *pages
}

func newDoor(cfg *Config, op *orders.Operator, p *pages) *door {
	return &door{cfg: cfg, op: op, keys: newKeys(cfg.PasswordHash, cfg.Token), pages: p,
		sessions:   &sessionKeys{load: op.SessionSecret, fixed: cfg.SessionKey},
		devices:    &sessionKeys{load: op.DeviceSecret, fixed: cfg.SessionKey},
		limiter:    newLimiter(cfg.SignInPerMinute, cfg.SignInGlobalPerMinute, time.Minute),
		opsLimiter: newLimiter(cfg.SignInPerMinute, cfg.SignInGlobalPerMinute, time.Minute),
		guard:      newGuard(cfg.PasswordChecked)}
}

const cookieName = "parla_admin"

// who is the signed-in operator of a request to the admin area: a valid bearer token, or a
// session cookie. A wrong token counts as a failed sign-in attempt (whoCounted).
func (d *door) who(c *fiber.Ctx) (s session, ok, limited bool) { return d.whoCounted(c, d.limiter) }

// whoCounted is who with a wrong token counted by l; limited says the address is past l's
// limit (its token then goes unchecked) or this failure is past the global one.
func (d *door) whoCounted(c *fiber.Ctx, l *limiter) (s session, ok, limited bool) {
	if !d.keys.open() {
		return session{}, false, false
	}
	if tok, has := bearer(c); has {
		ip, now := d.cfg.ClientIP(c), d.cfg.Now()
		if l.blocked(ip, now) {
			return session{}, false, true
		}
		if d.keys.tokenOK(tok) {
			return session{Who: "token"}, true, false
		}
		return session{}, false, !l.fail(ip, now)
	}
	v := c.Cookies(cookieName)
	if v == "" {
		return session{}, false, false
	}
	k, err := d.sessions.current(c.UserContext(), d.cfg.Now())
	if err != nil {
		d.cfg.Log.Error("reading the admin session key", "err", err)
		return session{}, false, false
	}
	s, err = k.parseCookie(v, d.cfg.Now(), d.cfg.SessionTTL)
	return s, err == nil, false
}

func bearer(c *fiber.Ctx) (string, bool) {
	h := c.Get(fiber.HeaderAuthorization)
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", h != ""
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
func (d *door) require(c *fiber.Ctx) error {
	s, ok, limited := d.who(c)
	if ok {
		c.Locals("admin", s)
		return c.Next()
	}
	if limited {
		return d.pages.refuse(c, fiber.StatusTooManyRequests, "rate_limited", "Too many attempts; wait a minute.")
	}
	if _, hasBearer := bearer(c); hasBearer {
		return d.pages.refuse(c, fiber.StatusUnauthorized, "unauthorized", "The token is not valid.")
	}
	if wantsJSON(c) || c.Method() != fiber.MethodGet {
		return d.pages.refuse(c, fiber.StatusUnauthorized, "unauthorized", "Sign in first.")
	}
	return c.Redirect("/admin/sign-in", fiber.StatusSeeOther)
}

func current(c *fiber.Ctx) session {
	s, _ := c.Locals("admin").(session)
	return s
}

// csrfToken is the form's csrf field or the X-CSRF-Token header, never the query string,
// which lands in access logs, history and Referer headers.
func csrfToken(c *fiber.Ctx) string {
	if t := c.Get("X-CSRF-Token"); t != "" {
		return t
	}
	if t := c.Request().PostArgs().Peek("csrf"); len(t) > 0 {
		return string(t)
	}
	if f, err := c.MultipartForm(); err == nil && len(f.Value["csrf"]) > 0 {
		return f.Value["csrf"][0]
	}
	return ""
}

// csrf checks a signed-in session's token on every state-changing request; bearer
// requests carry no cookie and need none.
func (d *door) csrf(c *fiber.Ctx) error {
	s := current(c)
	if s.Nonce == "" { // the token, not a cookie
		return c.Next()
	}
	k, err := d.sessions.current(c.UserContext(), d.cfg.Now())
	if err != nil || !k.csrfOK(s, csrfToken(c)) {
		return d.pages.refuse(c, fiber.StatusForbidden, "csrf_invalid", "The form has expired or did not come from this site; reload the page and try again.")
	}
	return c.Next()
}

// csrfOf is the CSRF token the request's session puts in its forms ("" for the token).
func (d *door) csrfOf(c *fiber.Ctx) string {
	s := current(c)
	if s.Nonce == "" {
		return ""
	}
	k, err := d.sessions.current(c.UserContext(), d.cfg.Now())
	if err != nil {
		return ""
	}
	return k.csrf(s)
}

// sameOrigin guards River's UI and the sign-in form: River's API changes jobs with JSON
// requests and knows nothing of our CSRF tokens, and a sign-in has no session yet to tie a
// token to, so a state-changing browser request must come from our own pages (Origin, or
// Sec-Fetch-Site). The SameSite=Strict cookie already keeps other sites' requests out of
// River's UI; this holds if a browser ignores it, and stops a forged sign-in.
func (d *door) sameOrigin(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	if _, hasBearer := bearer(c); hasBearer {
		return c.Next() // a script: no cookie rides along
	}
	if site := c.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return d.pages.refuse(c, fiber.StatusForbidden, "csrf_invalid", "Cross-site request refused.")
	}
	if origin := c.Get(fiber.HeaderOrigin); origin != "" && origin != c.BaseURL() {
		return d.pages.refuse(c, fiber.StatusForbidden, "csrf_invalid", "Cross-site request refused.")
	}
	return c.Next()
}

func (d *door) signInPage(c *fiber.Ctx) error {
	if _, ok, _ := d.who(c); ok {
		return c.Redirect("/admin/orders", fiber.StatusSeeOther)
	}
	return d.pages.page(c, "signin", view{Title: "Sign in"})
}

// signIn checks the password. Only failures are counted and limited: an address past its
// count is refused unchecked, and a wrong password past the global count is answered 429,
// but the right password from any other address always gets in, and so does the right
// password from a browser that signed in before (its device cookie), whoever else spent the
// failures of its address or /64.
func (d *door) signIn(c *fiber.Ctx) error {
	ip, now := d.cfg.ClientIP(c), d.cfg.Now()
	if d.limiter.blocked(ip, now) && !d.knownDevice(c, now) {
		return d.pages.refuse(c, fiber.StatusTooManyRequests, "rate_limited", "Too many sign-in attempts; wait a minute.")
	}
	// Past the global count, only a browser that signed in before is checked (door_guard.go).
	allowed := func() bool { return !d.limiter.flooded(now) || d.knownDevice(c, now) }
	if !allowed() {
		return d.pages.refuse(c, fiber.StatusTooManyRequests, "rate_limited", "Too many sign-in attempts; wait a minute.")
	}
	who, ok, ran := d.guard.check(c.UserContext(), d.keys, c.FormValue("password"), allowed)
	if !ran {
		return d.pages.refuse(c, fiber.StatusTooManyRequests, "rate_limited", "Too many sign-in attempts; wait a minute.")
	}
	if !ok && !d.limiter.fail(ip, now) {
		return d.pages.refuse(c, fiber.StatusTooManyRequests, "rate_limited", "Too many sign-in attempts; wait a minute.")
	}
	result := "ok"
	if !ok {
		who, result = "anonymous", "refused: wrong password"
	}
	if err := d.op.Record(c.UserContext(), orders.Actor{Who: who, IP: ip}, "sign_in", result); err != nil {
		d.cfg.Log.Error("recording a sign-in", "err", err)
	}
	if !ok {
		if wantsJSON(c) {
			return d.pages.refuse(c, fiber.StatusUnauthorized, "unauthorized", "Wrong password.")
		}
		return d.pages.page(c.Status(fiber.StatusUnauthorized), "signin", view{Title: "Sign in", Message: "Wrong password."})
	}
	k, err := d.sessions.current(c.UserContext(), now)
	if err != nil {
		return d.pages.failed(c, "reading the admin session key", err)
	}
	s := session{Who: who, Nonce: randomToken(), Issued: now, Expires: now.Add(d.cfg.SessionTTL)}
	c.Cookie(d.sessionCookie(c, k.cookie(s), s.Expires))
	d.markDevice(c, now)
	return c.Redirect("/admin/orders", fiber.StatusSeeOther)
}

func (d *door) sessionCookie(c *fiber.Ctx, value string, expires time.Time) *fiber.Cookie {
	return &fiber.Cookie{Name: cookieName, Value: value, Path: "/admin", Expires: expires,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: d.cfg.SecureCookies || c.Protocol() == "https"}
}

func (d *door) signOut(c *fiber.Ctx) error {
	c.Cookie(d.sessionCookie(c, "", time.Unix(1, 0)))
	return c.Redirect("/admin/sign-in", fiber.StatusSeeOther)
}

// signOutEveryone replaces the session secret (audited): every session ends, this one's
// too, on this node at once and on the others within keyRefresh. Device cookies stay
// valid, so the operator's browser still gets in during a flood, unless the form's
// "devices" box (or field) asks to revoke them too.
func (d *door) signOutEveryone(c *fiber.Ctx) error {
	by := orders.Actor{Who: current(c).Who, IP: d.cfg.ClientIP(c), Once: c.FormValue("once")}
	if by.Once == "" {
		by.Once = c.Get("Idempotency-Key") // as the order actions take it
	}
	if len(by.Once) > 100 {
		return d.pages.refuse(c, fiber.StatusBadRequest, "bad_request", "The once key is too long.")
	}
	devices := c.FormValue("devices") != ""
	out, err := d.op.SignEveryoneOut(c.UserContext(), by, devices)
	d.sessions.forget()
	if devices {
		d.devices.forget()
	}
	if err != nil {
		return d.pages.failed(c, "signing everyone out", err)
	}
	if wantsJSON(c) {
		return outcome(c, fiber.StatusOK, out, nil)
	}
	return d.signOut(c)
}
