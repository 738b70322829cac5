// Package credit is the API's money: prepaid credit bought through the payment provider,
// the keys that spend it, and the ledger of their calls (no HTTP). Balances are kept in
// thousandths of a cent; a call's price is held before its work and settled after it, so
// that concurrent calls never take a balance below zero and a failed call costs nothing.
// An Idempotency-Key makes a retried call charge once. A key is shown in full once (the
// confirmation page's first answer) and mailed once; until both happened it is kept sealed
// with a secret of the database's, after that only its hash.
package credit

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"parla/api/orders"
	"parla/providers"
	"parla/providers/sqldb"
)

// Config bounds what may be bought and how long it lasts.
type Config struct {
	PublicURL string
	// Page and Success are the /api page and its confirmation under PublicURL, where the
	// checkout returns: api's routes (api.CreditPage, api.CreditSuccess).
	Page, Success string
	// MinAmount and MaxAmount bound one purchase, in cents (default 500 and 10,000).
	MinAmount, MaxAmount int64
	Currency             string        // default "eur"
	TTL                  time.Duration // how long bought credit lasts (default 365 days)
	CheckoutTTL          time.Duration // how long the hosted page takes payment (default 1 h)
	// Holder names this process on the holds it takes (the queue's process identity), so
	// that ReleaseDead gives back the holds of a process that died mid-call.
	Holder string
	// StaleHold is how long a call's hold may stay unsettled before ReleaseDead gives it
	// back whoever holds it: a backstop (default 2 h, far longer than any call).
	StaleHold time.Duration
	ImageURL  string // the checkout's line item image
	Now       func() time.Time
}

func (c *Config) defaults() {
	if c.MinAmount <= 0 {
		c.MinAmount = 500
	}
	if c.MaxAmount <= 0 {
		c.MaxAmount = 10_000
	}
	if c.Currency == "" {
		c.Currency = "eur"
	}
	if c.TTL <= 0 {
		c.TTL = 365 * 24 * time.Hour
	}
	if c.CheckoutTTL <= 0 {
		c.CheckoutTTL = time.Hour
	}
	if c.StaleHold <= 0 {
		c.StaleHold = 2 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Deps are the outside parts credit uses.
type Deps struct {
	DB       *sqldb.DB
	Payments providers.Payments
	Mailer   providers.Mailer
	Log      *slog.Logger
}

// Credit is the API's money: the Shop sells credit and hands out keys, the Ledger spends it,
// the Keyring is the operator's side.
type Credit struct {
	Shop    *Shop
	Ledger  *Ledger
	Keyring *Keyring
	cfg     Config
}

// New migrates credit's tables and builds its parts.
func New(ctx context.Context, cfg Config, deps Deps) (*Credit, error) {
	cfg.defaults()
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if err := deps.DB.Migrate(ctx, "credit_migrations", migrations); err != nil {
		return nil, err
	}
	rows := &keyRows{db: deps.DB}
	seal := &sealer{db: deps.DB, now: cfg.Now}
	return &Credit{cfg: cfg,
		Ledger: &Ledger{cfg: cfg, db: deps.DB, keys: rows, log: deps.Log},
		Shop: &Shop{cfg: cfg, keys: rows, seal: seal, payments: deps.Payments, mailer: deps.Mailer,
			log: deps.Log},
		Keyring: &Keyring{cfg: cfg, keys: rows, payments: deps.Payments, log: deps.Log},
	}, nil
}

// Config returns credit's effective configuration.
func (c *Credit) Config() Config { return c.cfg }

// Errors callers branch on.
var (
	// ErrInvalidKey: no active key has this secret (unknown, revoked, refunded or expired).
	ErrInvalidKey = errors.New("invalid API key")
	// ErrInsufficient: the balance cannot cover the call; nothing was held.
	ErrInsufficient = errors.New("insufficient credit")
	// ErrInFlight: a call with the same Idempotency-Key is running now.
	ErrInFlight = errors.New("a call with this Idempotency-Key is in progress")
	// ErrIdempotencyMismatch: the Idempotency-Key was used for a different request.
	ErrIdempotencyMismatch = errors.New("this Idempotency-Key was used with a different request")
	// ErrIdempotencySpent: the Idempotency-Key's call was done and answered again as often
	// as a lost answer needs (MaxRepeats, within RepeatWindow of its settling).
	ErrIdempotencySpent = errors.New("this Idempotency-Key's call was done and answered again already; use a new key for a new call")
)

// A settled call's Idempotency-Key answers its retries free, as a client that lost the
// answer needs, at most MaxRepeats times and within RepeatWindow of the settling: past
// either, the key is refused (ErrIdempotencySpent) rather than doing the work free for good.
const (
	MaxRepeats   = 3
	RepeatWindow = 24 * time.Hour
)

// input is a request the shop refuses, with a code of the API's error table.
func input(code, message string) error { return &orders.InputError{Code: code, Message: message} }

// ErrNotFound: no key or purchase has this id or checkout session (the API's
// session_not_found).
var ErrNotFound = orders.ErrNotFound
