package admin

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Sessions are stateless: the cookie carries its expiry, a random nonce and who signed in,
// signed with HMAC-SHA256 under a key derived from the configured secrets. Any node of a
// cluster with the same ADMIN_PASSWORD_HASH / ADMIN_TOKEN accepts it, and changing either
// secret signs every session out. The CSRF token of a session is an HMAC of its nonce.

// keys hold what the admin area checks credentials and sessions with.
type keys struct {
	passwordHash []byte   // bcrypt; nil = no password sign-in
	tokenDigest  [32]byte // SHA-256 of ADMIN_TOKEN
	hasToken     bool
	session      []byte // HMAC key for cookies and CSRF tokens
}

func newKeys(passwordHash, token string) keys {
	k := keys{}
	if passwordHash != "" {
		k.passwordHash = []byte(passwordHash)
	}
	if token != "" {
		k.tokenDigest, k.hasToken = sha256.Sum256([]byte(token)), true
	}
	secret := sha256.Sum256([]byte(passwordHash + "\n" + token))
	m := hmac.New(sha256.New, secret[:])
	m.Write([]byte("parla admin session v1"))
	k.session = m.Sum(nil)
	return k
}

// open reports whether any way in is configured.
func (k keys) open() bool { return k.passwordHash != nil || k.hasToken }

// tokenOK compares a bearer token with ADMIN_TOKEN in constant time (digests, so the
// length does not leak either).
func (k keys) tokenOK(token string) bool {
	if !k.hasToken || token == "" {
		return false
	}
	d := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(d[:], k.tokenDigest[:]) == 1
}

// maxPassword bounds what is hashed (bcrypt reads 72 bytes at most anyway).
const maxPassword = 256

// signIn checks what the sign-in form was given: the password (bcrypt, constant time), or
// the token when it is set. It says who signed in: "password" or "token".
func (k keys) signIn(secret string) (string, bool) {
	if secret == "" || len(secret) > maxPassword {
		return "", false
	}
	if k.passwordHash != nil && bcrypt.CompareHashAndPassword(k.passwordHash, []byte(secret)) == nil {
		return "password", true
	}
	if k.tokenOK(secret) {
		return "token", true
	}
	return "", false
}

func (k keys) mac(parts ...string) string {
	m := hmac.New(sha256.New, k.session)
	m.Write([]byte(strings.Join(parts, ".")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// session is a signed-in operator.
type session struct {
	Who     string
	Nonce   string
	Expires time.Time
}

// cookie encodes a session: v1.<expiry unix>.<nonce>.<who>.<mac>.
func (k keys) cookie(s session) string {
	payload := []string{"v1", strconv.FormatInt(s.Expires.Unix(), 10), s.Nonce, s.Who}
	return strings.Join(append(payload, k.mac(payload...)), ".")
}

var errBadSession = errors.New("no valid admin session")

// parseCookie verifies a session cookie's signature (constant time) and expiry.
func (k keys) parseCookie(v string, now time.Time) (session, error) {
	p := strings.Split(v, ".")
	if len(p) != 5 || p[0] != "v1" {
		return session{}, errBadSession
	}
	if !hmac.Equal([]byte(p[4]), []byte(k.mac(p[:4]...))) {
		return session{}, errBadSession
	}
	exp, err := strconv.ParseInt(p[1], 10, 64)
	if err != nil || !now.Before(time.Unix(exp, 0)) {
		return session{}, errBadSession
	}
	if p[3] != "password" && p[3] != "token" {
		return session{}, errBadSession
	}
	return session{Who: p[3], Nonce: p[2], Expires: time.Unix(exp, 0)}, nil
}

// csrf is the session's token for state-changing forms.
func (k keys) csrf(s session) string { return k.mac("csrf", s.Nonce) }

// csrfOK checks a form's token against the session's in constant time.
func (k keys) csrfOK(s session, token string) bool {
	return token != "" && hmac.Equal([]byte(token), []byte(k.csrf(s)))
}

func randomToken() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// limiter counts attempts in fixed windows, per client address and for everyone: a
// flood from many addresses is held back too. Counts live in this process (a node of a
// cluster counts its own).
type limiter struct {
	mu        sync.Mutex
	perClient int
	global    int
	window    time.Duration
	clients   map[string]*count
	all       count
}

type count struct {
	start time.Time
	n     int
}

func (c *count) add(now time.Time, window time.Duration) int {
	if now.Sub(c.start) >= window {
		c.start, c.n = now, 0
	}
	c.n++
	return c.n
}

func newLimiter(perClient, global int, window time.Duration) *limiter {
	return &limiter{perClient: perClient, global: global, window: window, clients: map[string]*count{}}
}

// maxClients bounds the table; past it the table starts afresh (a flood of addresses is
// still held by the global count).
const maxClients = 10000

// allow counts one attempt from ip and reports whether it is within both limits.
func (l *limiter) allow(ip string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.clients[ip]
	if !ok {
		if len(l.clients) >= maxClients {
			l.clients = map[string]*count{}
		}
		c = &count{start: now}
		l.clients[ip] = c
	}
	mine := c.add(now, l.window)
	everyone := l.all.add(now, l.window)
	return mine <= l.perClient && everyone <= l.global
}
