package admin

// What a sign-in may cost the server, whatever the attackers do (issue 30): bcrypt runs at
// most passwordChecks at once; past the global count of failures a password is refused
// before it is hashed, unless the browser carries a device cookie, the signed mark of an
// earlier successful sign-in (OWASP's "device cookies"), so the operator still gets in
// during a flood; and the limiter's table, when full, drops only entries that block
// nobody, so an address blocked stays blocked whatever other addresses do.

import (
	"context"
	"crypto/hmac"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
)

// passwordChecks is how many bcrypt checks run at once: each takes a core for a quarter
// of a second at the default cost, and the machine has paid work to do.
const passwordChecks = 2

// passwordWait is the longest a sign-in waits for a check's turn before it is answered
// 429: a queue longer than that is a flood.
const passwordWait = 3 * time.Second

// deviceCookieName and deviceTTL: the device cookie a successful sign-in leaves, and how
// long it vouches for its browser.
const (
	deviceCookieName = "parla_admin_device"
	deviceTTL        = 90 * 24 * time.Hour
)

// guard bounds the password checks of the sign-in form.
type guard struct {
	turns chan struct{}
	// checks counts the password checks run (a test reads it: every one is a bcrypt
	// comparison when a password hash is configured).
	checks atomic.Int64
	heard  func() // Config.PasswordChecked
}

func newGuard(heard func()) *guard {
	return &guard{turns: make(chan struct{}, passwordChecks), heard: heard}
}

// check runs one password check in its turn, or reports false when none came within
// passwordWait (or ctx ended), or when allowed, asked again once the turn came, says no
// (the flood began while this attempt waited).
func (g *guard) check(ctx context.Context, k keys, password string, allowed func() bool) (who string, ok, ran bool) {
	t := time.NewTimer(passwordWait)
	defer t.Stop()
	select {
	case g.turns <- struct{}{}:
	case <-t.C:
		return "", false, false
	case <-ctx.Done():
		return "", false, false
	}
	defer func() { <-g.turns }()
	if !allowed() {
		return "", false, false
	}
	g.checks.Add(1)
	if g.heard != nil {
		g.heard()
	}
	who, ok = k.signIn(password)
	return who, ok, true
}

// deviceCookie is the signed mark a browser gets when its sign-in succeeded:
// d1.<issued unix>.<nonce>.<mac>. It is signed under a key of its own (the stored device
// secret, door.devices), so signing everyone out leaves it valid unless the operator
// revokes the device cookies too.
func (k signer) deviceCookie(nonce string, issued time.Time) string {
	payload := []string{"d1", strconv.FormatInt(issued.Unix(), 10), nonce}
	return strings.Join(append(payload, k.mac(append([]string{"device"}, payload...)...)), ".")
}

// deviceOK checks a device cookie's signature (constant time) and age.
func (k signer) deviceOK(v string, now time.Time) bool {
	p := strings.Split(v, ".")
	if len(p) != 4 || p[0] != "d1" {
		return false
	}
	if !hmac.Equal([]byte(p[3]), []byte(k.mac(append([]string{"device"}, p[:3]...)...))) {
		return false
	}
	issued, err := strconv.ParseInt(p[1], 10, 64)
	if err != nil {
		return false
	}
	age := now.Sub(time.Unix(issued, 0))
	return age < deviceTTL && age > -clockSkew
}

// knownDevice reports whether the request carries a valid device cookie.
func (d *door) knownDevice(c *fiber.Ctx, now time.Time) bool {
	v := c.Cookies(deviceCookieName)
	if v == "" {
		return false
	}
	k, err := d.devices.current(c.UserContext(), now)
	return err == nil && k.deviceOK(v, now)
}

// markDevice leaves the device cookie on a browser that just signed in.
func (d *door) markDevice(c *fiber.Ctx, now time.Time) {
	k, err := d.devices.current(c.UserContext(), now)
	if err != nil {
		d.cfg.Log.Error("reading the admin device key", "err", err)
		return
	}
	expires := now.Add(deviceTTL)
	c.Cookie(&fiber.Cookie{Name: deviceCookieName, Value: k.deviceCookie(randomToken(), now), Path: "/admin",
		Expires: expires, HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode,
		Secure: d.cfg.SecureCookies || c.Protocol() == "https"})
}

// flooded reports that this window's failures from everyone reached the global count: a
// password is then refused unhashed, unless from a known device.
func (l *limiter) flooded(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.at(now, l.window) >= l.global
}

// makeRoom frees a place in the full table (l.mu held): entries that block nobody go
// (their window is over, or their count is under the limit); blocked addresses stay until
// their window ends. It reports false when every entry blocks someone: the new address's
// failures then count only toward the global limit. A sweep that frees nothing is not
// repeated until the earliest block ends.
func (l *limiter) makeRoom(now time.Time) bool {
	if len(l.clients) < maxClients {
		return true
	}
	if now.Before(l.fullUntil) {
		return false
	}
	earliest := time.Time{}
	for k, c := range l.clients {
		if c.at(now, l.window) < l.perClient {
			delete(l.clients, k)
			continue
		}
		if end := c.start.Add(l.window); earliest.IsZero() || end.Before(earliest) {
			earliest = end
		}
	}
	if len(l.clients) < maxClients {
		return true
	}
	l.fullUntil = earliest
	return false
}
