package credit

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"parla/providers/sqldb"
)

// KeyPrefix starts every key, so that a key found in code or logs says whose it is.
const KeyPrefix = "sk-parla-"

// keyChars is the length of a key's random part, in base62: 43 characters, 256 bits.
const keyChars = 43

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newSecret is a fresh key: the prefix and keyChars random base62 characters (each
// drawn without bias by rejection).
func newSecret() string {
	var b strings.Builder
	b.WriteString(KeyPrefix)
	buf := make([]byte, 64)
	for b.Len() < len(KeyPrefix)+keyChars {
		if _, err := rand.Read(buf); err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on Linux
		}
		for _, c := range buf {
			if c < 248 && b.Len() < len(KeyPrefix)+keyChars { // 248 = 4 × 62
				b.WriteByte(base62[c%62])
			}
		}
	}
	return b.String()
}

// hashSecret is what is kept of a key for good: its SHA-256. A key has 256 random bits,
// so a fast hash is enough; nobody can try them all.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Masked writes a key as later answers and the admin area show it: sk-parla-…abcd.
func Masked(last4 string) string { return KeyPrefix + "…" + last4 }

// newID is a row id: 16 random bytes, URL-safe.
func newID() string {
	buf := make([]byte, 16)
	if _, err := rand.Read(buf); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(buf)
}

// sealer seals a key for the short while between payment and both its showing and its
// letter, under a random secret made once in the database (credit_secrets), which every
// node shares. It keeps the key out of a dump of credit_keys alone, not from someone who
// holds the whole database; that is why the sealed key is erased as soon as it is not
// needed.
type sealer struct {
	db   *sqldb.DB
	now  func() time.Time
	mu   sync.Mutex
	aead cipher.AEAD
}

func (s *sealer) cipher(ctx context.Context) (cipher.AEAD, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aead != nil {
		return s.aead, nil
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO credit_secrets (name, value, created_at) VALUES ('seal', ?, ?)
		ON CONFLICT (name) DO NOTHING`, hex.EncodeToString(fresh), millis(s.now())); err != nil {
		return nil, fmt.Errorf("making the credit seal: %w", err)
	}
	var v string
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM credit_secrets WHERE name = 'seal'`).Scan(&v); err != nil {
		return nil, fmt.Errorf("reading the credit seal: %w", err)
	}
	key, err := hex.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("the credit seal is not hex: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if s.aead, err = cipher.NewGCM(block); err != nil {
		return nil, err
	}
	return s.aead, nil
}

// seal encrypts a key, bound to its row's id.
func (s *sealer) seal(ctx context.Context, id, secret string) (string, error) {
	aead, err := s.cipher(ctx)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(secret), []byte(id))), nil
}

// errForgotten: the sealed key was erased (shown and mailed), only its hash is kept.
var errForgotten = errors.New("the key is no longer kept")

// open decrypts a sealed key.
func (s *sealer) open(ctx context.Context, id, sealed string) (string, error) {
	if sealed == "" {
		return "", errForgotten
	}
	aead, err := s.cipher(ctx)
	if err != nil {
		return "", err
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < aead.NonceSize() {
		return "", fmt.Errorf("sealed key of %s is damaged", id)
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(id))
	if err != nil {
		return "", fmt.Errorf("opening the sealed key of %s: %w", id, err)
	}
	return string(plain), nil
}

// Key is a key's row: what it bought, what is left, and where its secret stands.
type Key struct {
	ID            string
	Status        string // awaiting_payment, active, expired (unpaid), revoked, refunded
	SessionID     string
	PaymentIntent string
	Amount        int64 // cents paid
	Currency      string
	Email         string
	Locale        string
	Last4         string
	Balance       int64 // thousandths of a cent
	Held          int64 // thousandths of a cent that running calls hold
	Calls         int64
	CreatedAt     time.Time
	PaidAt        time.Time
	ExpiresAt     time.Time
	ShownAt       time.Time
	MailState     string // "", sending, sent, retry, failed, refused (letter.go)
	Refunded      int64  // cents given back by the operator
	sealed        string
	mailClaimed   bool
	mailTries     int64     // the letter's sends claimed
	mailFailedAt  time.Time // the letter's last certain failure
}

// Key statuses.
const (
	StatusAwaiting = "awaiting_payment"
	StatusActive   = "active"
	StatusExpired  = "expired"
	StatusRevoked  = "revoked"
	StatusRefunded = "refunded"
)

// Masked is the key as later answers show it.
func (k Key) Masked() string { return Masked(k.Last4) }

// keyRows reads and writes credit_keys.
type keyRows struct{ db *sqldb.DB }

const keyColumns = `id, status, COALESCE(session_id, ''), payment_intent, amount, currency, email, locale,
	key_last4, balance, held, calls, created_at, paid_at, expires_at, shown_at, mail_state, refunded,
	key_sealed, mail_claimed_at, mail_tries, mail_failed_at`

func scanKey(s sqldb.Scanner) (Key, error) {
	var k Key
	var created, paid, expires, shown, claimed, failed int64
	err := s.Scan(&k.ID, &k.Status, &k.SessionID, &k.PaymentIntent, &k.Amount, &k.Currency, &k.Email,
		&k.Locale, &k.Last4, &k.Balance, &k.Held, &k.Calls, &created, &paid, &expires, &shown, &k.MailState,
		&k.Refunded, &k.sealed, &claimed, &k.mailTries, &failed)
	k.CreatedAt, k.PaidAt, k.ExpiresAt, k.ShownAt = fromMillis(created), fromMillis(paid), fromMillis(expires), fromMillis(shown)
	k.mailFailedAt = fromMillis(failed)
	k.mailClaimed = claimed != 0
	return k, err
}

// one reads the key a column names; ErrNotFound when none does.
func (r *keyRows) one(ctx context.Context, column, value string) (Key, error) {
	k, err := scanKey(r.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM credit_keys WHERE `+column+` = ?`, value))
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNotFound
	}
	return k, err
}

func (r *keyRows) byID(ctx context.Context, id string) (Key, error) { return r.one(ctx, "id", id) }
