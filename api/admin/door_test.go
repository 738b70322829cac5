package admin

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// fromHeader names the client by X-Test-IP, so one test can speak from many addresses.
func fromHeader(c *fiber.Ctx) string {
	if ip := c.Get("X-Test-IP"); ip != "" {
		return ip
	}
	return c.IP()
}

func (f *fixture) signInFrom(ip, password string) answer {
	f.t.Helper()
	return f.do("POST", "/admin/sign-in", url.Values{"password": {password}}, map[string]string{"X-Test-IP": ip})
}

// Sixty wrong passwords from sixty addresses fill the global count of failures; the
// operator with the right password still gets in from a browser that signed in before
// (its device cookie; a browser never seen is refused unhashed: TestKnownDeviceGetsInDuringAFlood).
func TestRightPasswordGetsInDuringAFloodFromManyAddresses(t *testing.T) {
	cfg := openConfig(t)
	cfg.ClientIP = fromHeader
	f := newFixture(t, cfg)
	first := f.signInFrom("203.0.113.8", testPassword)
	device := ""
	for _, c := range first.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, deviceCookieName+"=") {
			device = strings.SplitN(c, ";", 2)[0]
		}
	}
	for i := 0; i < 61; i++ {
		f.signInFrom(fmt.Sprintf("198.51.100.%d", i), "guess")
	}
	if r := f.signInFrom("203.0.113.7", "another guess"); r.status != 429 {
		t.Errorf("a wrong password past the global limit: %d, want 429", r.status)
	}
	r := f.do("POST", "/admin/sign-in", url.Values{"password": {testPassword}},
		map[string]string{"X-Test-IP": "203.0.113.8", "Cookie": device})
	if r.status != 303 {
		t.Errorf("the right password during the flood: %d, want 303", r.status)
	}
}

// IPv6 addresses are counted by /64: one host owns a whole /64.
func TestIPv6AddressesAreCountedBy64(t *testing.T) {
	cfg := openConfig(t)
	cfg.ClientIP = fromHeader
	f := newFixture(t, cfg)
	for i := 1; i <= 10; i++ {
		if r := f.signInFrom(fmt.Sprintf("2001:db8:1:2::%x", i), "guess"); r.status != 401 {
			t.Fatalf("attempt %d: %d", i, r.status)
		}
	}
	if r := f.signInFrom("2001:db8:1:2:ffff::1", "guess"); r.status != 429 {
		t.Errorf("another address of the same /64: %d, want 429", r.status)
	}
	if r := f.signInFrom("2001:db8:1:3::1", "guess"); r.status != 401 {
		t.Errorf("the next /64: %d, want 401", r.status)
	}
}

// A reader of ADMIN_PASSWORD_HASH cannot forge a session: a cookie in the current format,
// fresh and well formed, signed with a key derived from the hash (as the session key once
// was, and as a key derived from the configured secrets would be), is refused, while the
// same cookie signed with the stored secret's key is accepted: only the key tells them apart.
func TestSessionForgedFromThePasswordHashIsRefused(t *testing.T) {
	cfg := openConfig(t)
	cfg.Token = ""
	f := newFixture(t, cfg)
	now := time.Now()
	s := session{Who: "password", Nonce: "nonce", Issued: now, Expires: now.Add(time.Hour)}
	get := func(cookie string) int {
		return f.do("GET", "/admin/orders", nil, map[string]string{"Cookie": cookieName + "=" + cookie, "Accept": "application/json"}).status
	}
	secret, err := f.book.Operator().SessionSecret(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := get(newSigner(secret, "").cookie(s)); got != 200 {
		t.Errorf("the cookie signed with the stored secret's key: %d, want 200 (the forgeries below would prove nothing)", got)
	}
	old := sha256.Sum256([]byte(cfg.PasswordHash + "\n")) // the v1 derivation: hash and (empty) token
	for name, key := range map[string]signer{
		"the hash as the secret":      newSigner(cfg.PasswordHash, ""),
		"the v1 derivation":           newSigner(string(old[:]), ""),
		"the hash as the session key": newSigner("", cfg.PasswordHash),
	} {
		if got := get(key.cookie(s)); got != 401 {
			t.Errorf("a cookie signed with a key from %s: %d, want 401", name, got)
		}
	}
}

// Signing everyone out (an audited action) ends every session, this one's too.
func TestSignEveryoneOut(t *testing.T) {
	f := newFixture(t, openConfig(t))
	mine, csrf := f.signIn()
	other, _ := f.signIn()
	r := f.do("POST", "/admin/sign-out-everyone", url.Values{"csrf": {csrf}}, map[string]string{"Cookie": mine})
	if r.status != 303 {
		t.Fatalf("sign everyone out: %d %s", r.status, r.body)
	}
	for name, c := range map[string]string{"this session": mine, "another session": other} {
		if r := f.do("GET", "/admin/orders", nil, map[string]string{"Cookie": c, "Accept": "application/json"}); r.status != 401 {
			t.Errorf("%s after signing everyone out: %d", name, r.status)
		}
	}
	// Audited once, as done: an entry that says "error: …" or "started" is a failure.
	audit := f.do("GET", "/admin/audit", nil, map[string]string{"Authorization": "Bearer " + testToken, "Accept": "application/json"})
	var got struct{ Audit []auditJSON }
	if err := json.Unmarshal([]byte(audit.body), &got); err != nil {
		t.Fatalf("audit: %d %s: %v", audit.status, audit.body, err)
	}
	var entries []auditJSON
	for _, e := range got.Audit {
		if e.Action == "sign_out_everyone" {
			entries = append(entries, e)
		}
	}
	if len(entries) != 1 || entries[0].Result != "ok: every session signed out" || entries[0].Actor == "" {
		t.Errorf("audited as %+v, want one entry, ok: every session signed out, by its actor; all: %s", entries, audit.body)
	}
	if _, again := f.signIn(); again == "" {
		t.Error("no sign-in after signing everyone out")
	}
}

// The CSRF token is read from the form or a header, never from the query string (which
// lands in logs and Referer headers).
func TestCSRFTokenInTheQueryStringIsRefused(t *testing.T) {
	f := newFixture(t, openConfig(t))
	o := f.delivered()
	cookie, csrf := f.signIn()
	r := f.do("POST", "/admin/orders/"+o.ID+"/extend?csrf="+url.QueryEscape(csrf), url.Values{"days": {"3"}, "once": {"q"}},
		map[string]string{"Cookie": cookie})
	if r.status != 403 {
		t.Errorf("CSRF token in the query string: %d, want 403", r.status)
	}
	r = f.do("POST", "/admin/orders/"+o.ID+"/extend", url.Values{"days": {"3"}, "once": {"h"}},
		map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf})
	if r.status != 303 {
		t.Errorf("CSRF token in the X-CSRF-Token header: %d, want 303", r.status)
	}
}

// A cookie is held to the session's length from its signed issue time, whatever its own
// expiry says; and ADMIN_SESSION_KEY, when set, is needed to sign one.
func TestSessionIsHeldToItsLengthFromItsIssueTime(t *testing.T) {
	k := newSigner("stored secret", "")
	now := time.Now()
	long := k.cookie(session{Who: "password", Nonce: "n", Issued: now.Add(-9 * time.Hour), Expires: now.AddDate(10, 0, 0)})
	if _, err := k.parseCookie(long, now, 8*time.Hour); err == nil {
		t.Error("a cookie issued 9 h ago with a ten-year expiry is accepted")
	}
	future := k.cookie(session{Who: "password", Nonce: "n", Issued: now.Add(time.Hour), Expires: now.Add(2 * time.Hour)})
	if _, err := k.parseCookie(future, now, 8*time.Hour); err == nil {
		t.Error("a cookie issued an hour from now is accepted")
	}
	fresh := k.cookie(session{Who: "password", Nonce: "n", Issued: now, Expires: now.Add(8 * time.Hour)})
	if _, err := newSigner("stored secret", strings.Repeat("k", 32)).parseCookie(fresh, now, 8*time.Hour); err == nil {
		t.Error("a cookie signed without ADMIN_SESSION_KEY is accepted where it is set")
	}
}

// A node reads the stored secret again after keyRefresh: another node's sign-out of
// everyone reaches it.
func TestSessionKeyIsReadAgain(t *testing.T) {
	secret, reads := "one", 0
	s := &sessionKeys{load: func(context.Context) (string, error) { reads++; return secret, nil }}
	now := time.Now()
	first, _ := s.current(context.Background(), now)
	secret = "two"
	if same, _ := s.current(context.Background(), now.Add(keyRefresh/2)); string(same.key) != string(first.key) || reads != 1 {
		t.Errorf("read %d times within keyRefresh", reads)
	}
	if next, _ := s.current(context.Background(), now.Add(keyRefresh)); string(next.key) == string(first.key) {
		t.Error("the replaced secret is not read after keyRefresh")
	}
}
