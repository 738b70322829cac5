package admin

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// Wrong tokens sent to /metrics and /readyz (Authorized) are limited on their own and never
// count against the sign-in: after 200 of them from 20 addresses, the right password from
// a browser never seen before still signs in. The operator-only answers keep a limit of
// their own: an address past it is refused even the right token, another is not.
func TestBadTokensAtOperatorAnswersNeverLockTheSignInOut(t *testing.T) {
	cfg := openConfig(t)
	cfg.ClientIP = fromHeader
	f := newFixture(t, cfg)
	f.app.Get("/metrics", func(c *fiber.Ctx) error {
		if f.admin.Authorized(c) {
			return c.SendString("metrics")
		}
		return c.SendStatus(fiber.StatusUnauthorized)
	})
	probe := func(ip, auth string) int {
		return f.do("GET", "/metrics", nil, map[string]string{"X-Test-IP": ip, "Authorization": auth}).status
	}
	for i := range 200 {
		auth := "Bearer wrong-token"
		if i%2 == 1 {
			auth = "Basic b3BlcmF0b3I6Z3Vlc3M=" // operator:guess
		}
		if got := probe(fmt.Sprintf("198.51.100.%d", i%20), auth); got != 401 {
			t.Fatalf("bad token %d: %d, want 401", i+1, got)
		}
	}
	if r := f.signInFrom("203.0.113.50", testPassword); r.status != 303 {
		t.Errorf("the right password from a new address after 200 bad tokens at /metrics: %d, want 303", r.status)
	}
	if got := probe("198.51.100.3", "Bearer "+testToken); got != 401 {
		t.Errorf("the right token from an address past its limit of bad tokens: %d, want 401 (unchecked)", got)
	}
	if got := probe("203.0.113.51", "Bearer "+testToken); got != 200 {
		t.Errorf("the right token from another address: %d, want 200", got)
	}
}

// "Sign everyone out" ends every session but keeps the device cookies valid, so the
// operator's browser still gets in during a flood; asked to (the form's devices box), it
// revokes them too.
func TestSignEveryoneOutKeepsDeviceCookiesUnlessAsked(t *testing.T) {
	cfg := openConfig(t)
	cfg.ClientIP = fromHeader
	f := newFixture(t, cfg)
	flood := 0
	signInWithDevice := func(ip, known string) (session, device, csrf string) {
		r := f.do("POST", "/admin/sign-in", url.Values{"password": {testPassword}},
			map[string]string{"X-Test-IP": ip, "Cookie": known})
		for _, c := range r.header.Values("Set-Cookie") {
			switch {
			case strings.HasPrefix(c, deviceCookieName+"="):
				device = strings.SplitN(c, ";", 2)[0]
			case strings.HasPrefix(c, cookieName+"="):
				session = strings.SplitN(c, ";", 2)[0]
			}
		}
		if r.status != 303 || device == "" || session == "" {
			t.Fatalf("sign-in: %d, cookies %q %q", r.status, session, device)
		}
		page := f.do("GET", "/admin/audit", nil, map[string]string{"Cookie": session})
		i := strings.Index(page.body, `name="csrf" value="`)
		if i < 0 || !strings.Contains(page.body, `name="devices"`) {
			t.Fatalf("audit page: %d, no CSRF token or no devices box", page.status)
		}
		rest := page.body[i+len(`name="csrf" value="`):]
		return session, device, rest[:strings.IndexByte(rest, '"')]
	}
	signInDuringFlood := func(ip, device string) int {
		for range 61 {
			f.signInFrom(fmt.Sprintf("192.0.2.%d", flood%250), "guess")
			flood++
		}
		return f.do("POST", "/admin/sign-in", url.Values{"password": {testPassword}},
			map[string]string{"X-Test-IP": ip, "Cookie": device}).status
	}

	session, device, csrf := signInWithDevice("203.0.113.8", "")
	r := f.do("POST", "/admin/sign-out-everyone", url.Values{"csrf": {csrf}}, map[string]string{"Cookie": session, "X-Test-IP": "203.0.113.8"})
	if r.status != 303 {
		t.Fatalf("sign everyone out: %d %s", r.status, r.body)
	}
	if got := f.do("GET", "/admin/orders", nil, map[string]string{"Cookie": session, "Accept": "application/json"}).status; got != 401 {
		t.Errorf("the session after signing everyone out: %d, want 401", got)
	}
	if got := signInDuringFlood("203.0.113.9", device); got != 303 {
		t.Errorf("the kept device cookie during a flood, after signing everyone out: %d, want 303", got)
	}

	// Signed in again (the flood's minute is not over: by the kept device cookie).
	session, device, csrf = signInWithDevice("203.0.113.10", device)
	r = f.do("POST", "/admin/sign-out-everyone", url.Values{"csrf": {csrf}, "devices": {"1"}}, map[string]string{"Cookie": session, "X-Test-IP": "203.0.113.10"})
	if r.status != 303 {
		t.Fatalf("sign everyone out, devices too: %d %s", r.status, r.body)
	}
	if got := signInDuringFlood("203.0.113.11", device); got != 429 {
		t.Errorf("a revoked device cookie during a flood: %d, want 429", got)
	}
}

// Someone sharing the operator's address (or /64) who spends its sign-in failures does not
// lock out the operator's own browser: a device cookie of a browser that signed in before
// gets past the address's block, and the password is still checked.
func TestDeviceCookiePassesItsAddressBlock(t *testing.T) {
	cfg := openConfig(t)
	cfg.ClientIP = fromHeader
	f := newFixture(t, cfg)
	r := f.do("POST", "/admin/sign-in", url.Values{"password": {testPassword}}, map[string]string{"X-Test-IP": "203.0.113.20"})
	var device string
	for _, c := range r.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, deviceCookieName+"=") {
			device = strings.SplitN(c, ";", 2)[0]
		}
	}
	if r.status != 303 || device == "" {
		t.Fatalf("first sign-in: %d, device cookie %q", r.status, device)
	}
	for range 12 {
		f.signInFrom("203.0.113.20", "guess")
	}
	if got := f.do("POST", "/admin/sign-in", url.Values{"password": {testPassword}}, map[string]string{"X-Test-IP": "203.0.113.20"}).status; got != 429 {
		t.Fatalf("the right password from the blocked address without a device cookie: %d, want 429", got)
	}
	if got := f.do("POST", "/admin/sign-in", url.Values{"password": {testPassword}}, map[string]string{"X-Test-IP": "203.0.113.20", "Cookie": device}).status; got != 303 {
		t.Errorf("the right password with the device cookie from the blocked address: %d, want 303", got)
	}
	if got := f.do("POST", "/admin/sign-in", url.Values{"password": {"guess"}}, map[string]string{"X-Test-IP": "203.0.113.20", "Cookie": device}).status; got == 303 {
		t.Errorf("a wrong password with the device cookie: %d, signed in", got)
	}
}
