package admin

import (
	"context"
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

// Sessions are stateless: the cookie carries when it was issued, its expiry, a random nonce
// and who signed in, signed with HMAC-SHA256 under the session key. That key comes from a
// random secret kept in the database (orders.Operator.SessionSecret), never from the
// password hash or the token, so reading those forges nothing; ADMIN_SESSION_KEY, when set,
// is mixed in. Every node of a cluster reads the same secret, so any node accepts any
// session, and replacing it (sign everyone out) ends them all. The CSRF token of a session
// is an HMAC of its nonce.

// keys hold what the admin area checks credentials with.
type keys struct {
	passwordHash []byte   // bcrypt; nil = no password sign-in
	tokenDigest  [32]byte // SHA-256 of ADMIN_TOKEN
	hasToken     bool
}

func newKeys(passwordHash, token string) keys {
	k := keys{}
	if passwordHash != "" {
		k.passwordHash = []byte(passwordHash)
	}
	if token != "" {
		k.tokenDigest, k.hasToken = sha256.Sum256([]byte(token)), true
	}
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

// signer signs and checks session cookies and CSRF tokens under one session key.
type signer struct{ key []byte }

// newSigner derives the session key from the stored secret and ADMIN_SESSION_KEY (fixed,
// may be empty): both are needed to forge a session when both are set.
func newSigner(secret, fixed string) signer {
	m := hmac.New(sha256.New, []byte("parla admin session v2\n"+fixed))
	m.Write([]byte(secret))
	return signer{key: m.Sum(nil)}
}

func (k signer) mac(parts ...string) string {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(strings.Join(parts, ".")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// session is a signed-in operator.
type session struct {
	Who     string
	Nonce   string
	Issued  time.Time
	Expires time.Time
}

// cookie encodes a session: v2.<issued unix>.<expiry unix>.<nonce>.<who>.<mac>.
func (k signer) cookie(s session) string {
	payload := []string{"v2", strconv.FormatInt(s.Issued.Unix(), 10), strconv.FormatInt(s.Expires.Unix(), 10), s.Nonce, s.Who}
	return strings.Join(append(payload, k.mac(payload...)), ".")
}

var errBadSession = errors.New("no valid admin session")

// clockSkew is how far in the future an issue time may lie (another node's clock).
const clockSkew = time.Minute

// parseCookie verifies a session cookie's signature (constant time), its expiry, and that
// it was issued less than ttl ago, whatever its expiry says.
func (k signer) parseCookie(v string, now time.Time, ttl time.Duration) (session, error) {
	p := strings.Split(v, ".")
	if len(p) != 6 || p[0] != "v2" {
		return session{}, errBadSession
	}
	if !hmac.Equal([]byte(p[5]), []byte(k.mac(p[:5]...))) {
		return session{}, errBadSession
	}
	issued, err1 := strconv.ParseInt(p[1], 10, 64)
	exp, err2 := strconv.ParseInt(p[2], 10, 64)
	s := session{Who: p[4], Nonce: p[3], Issued: time.Unix(issued, 0), Expires: time.Unix(exp, 0)}
	if err1 != nil || err2 != nil || !now.Before(s.Expires) || now.Sub(s.Issued) >= ttl || s.Issued.After(now.Add(clockSkew)) {
		return session{}, errBadSession
	}
	if s.Who != "password" && s.Who != "token" {
		return session{}, errBadSession
	}
	return s, nil
}

// csrf is the session's token for state-changing forms.
func (k signer) csrf(s session) string { return k.mac("csrf", s.Nonce) }

// csrfOK checks a form's token against the session's in constant time.
func (k signer) csrfOK(s session, token string) bool {
	return token != "" && hmac.Equal([]byte(token), []byte(k.csrf(s)))
}

// keyRefresh is how long a node signs with the secret it read before reading it again: a
// sign-out of everyone on another node reaches this one within it.
const keyRefresh = 10 * time.Second

// sessionKeys hands out the signer of the stored secret, read again every keyRefresh.
type sessionKeys struct {
	load  func(context.Context) (string, error)
	fixed string // ADMIN_SESSION_KEY

	mu     sync.Mutex
	signer signer
	read   time.Time
}

// current is the signer to use now.
func (s *sessionKeys) current(ctx context.Context, now time.Time) (signer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signer.key != nil && now.Sub(s.read) < keyRefresh && !now.Before(s.read) {
		return s.signer, nil
	}
	secret, err := s.load(ctx)
	if err != nil {
		return signer{}, err
	}
	s.signer, s.read = newSigner(secret, s.fixed), now
	return s.signer, nil
}

// forget drops the secret read, after this node replaced it.
func (s *sessionKeys) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signer = signer{}
}

func randomToken() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
