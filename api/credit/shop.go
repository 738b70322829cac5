package credit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"parla/api/orders"
	"parla/providers"
	"parla/providers/texts"
)

// Shop sells credit: it opens the hosted checkout for an amount, turns a paid session
// into an active key (the webhook or the confirmation page, whichever comes first), shows
// the key once and mails it once.
type Shop struct {
	cfg      Config
	keys     *keyRows
	seal     *sealer
	payments providers.Payments
	mailer   providers.Mailer
	log      *slog.Logger
	asked    asked // when each unpaid session was last asked of the provider
}

// Purchase is what the /api page sends.
type Purchase struct {
	Amount             int64 // cents
	Email, EmailVerify string
	Locale             string
}

// Checkout is where the buyer goes to pay.
type Checkout struct {
	SessionID, URL string
	Amount         int64
	Currency       string
}

// Open validates a purchase, stores it awaiting payment and opens its checkout.
func (s *Shop) Open(ctx context.Context, p Purchase) (Checkout, error) {
	email, err := orders.ValidateEmail(p.Email, p.EmailVerify)
	if err != nil {
		return Checkout{}, err
	}
	locale, err := orders.ValidateLocale(p.Locale)
	if err != nil {
		return Checkout{}, err
	}
	if p.Amount < s.cfg.MinAmount || p.Amount > s.cfg.MaxAmount {
		return Checkout{}, input("invalid_amount", fmt.Sprintf("the amount must be between %d and %d cents",
			s.cfg.MinAmount, s.cfg.MaxAmount))
	}
	now := s.cfg.Now()
	id := newID()
	if _, err := s.keys.db.ExecContext(ctx, `INSERT INTO credit_keys (id, status, amount, currency, email, locale, created_at)
		VALUES (?, 'awaiting_payment', ?, ?, ?, ?, ?)`, id, p.Amount, s.cfg.Currency, email, locale, millis(now)); err != nil {
		return Checkout{}, fmt.Errorf("storing a credit purchase: %w", err)
	}
	lang := texts.In(locale)
	session, err := s.payments.CreateCheckout(ctx, providers.CheckoutRequest{
		OrderID: id, Email: email, Locale: locale, Amount: p.Amount, Currency: s.cfg.Currency,
		Name: lang.Get("product.credit.name"), Description: lang.Get("product.credit.description"),
		ImageURL:   s.cfg.ImageURL,
		SuccessURL: s.cfg.PublicURL + s.cfg.Success + "?session_id={CHECKOUT_SESSION_ID}",
		CancelURL:  s.cfg.PublicURL + s.cfg.Page, ExpiresAt: now.Add(s.cfg.CheckoutTTL),
	})
	if err != nil {
		s.expire(ctx, id)
		return Checkout{}, fmt.Errorf("opening the checkout of credit %s: %w", id, err)
	}
	if err := s.keys.db.Update(ctx, "binding a credit checkout", `UPDATE credit_keys SET session_id = ? WHERE id = ?`,
		session.ID, id); err != nil {
		return Checkout{}, err
	}
	s.log.Info("credit checkout opened", "credit", id, "amount", p.Amount)
	return Checkout{SessionID: session.ID, URL: session.URL, Amount: p.Amount, Currency: s.cfg.Currency}, nil
}

func (s *Shop) expire(ctx context.Context, id string) {
	if err := s.keys.db.Update(ctx, "expiring a credit purchase", `UPDATE credit_keys SET status = 'expired'
		WHERE id = ? AND status = 'awaiting_payment'`, id); err != nil {
		s.log.Error("expiring a credit purchase", "credit", id, "err", err)
	}
}

// HandleEvent acts on a verified payment event whose session is a credit purchase, or whose
// payment bought a key, and reports false for any other (the Cashier's hook:
// orders.Cashier.OtherSessions).
func (s *Shop) HandleEvent(ctx context.Context, ev orders.PaymentEvent) (bool, error) {
	if ev.Session.ID == "" {
		return s.endPaid(ctx, ev)
	}
	k, err := s.keys.one(ctx, "session_id", ev.Session.ID)
	if err == ErrNotFound {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		if ev.Session.Paid() {
			return true, s.confirm(ctx, k, ev.Session)
		}
	case "checkout.session.expired", "checkout.session.async_payment_failed":
		s.expire(ctx, k.ID)
	}
	return true, nil
}

// endings are the statuses a key takes when its payment is refunded (at the provider's
// dashboard) or disputed (by the buyer's bank): ended either way, never spendable again,
// and a refunded one no longer refunded by the operator.
var endings = map[string]string{"charge.refunded": StatusRefunded, "charge.dispute.created": StatusRevoked}

// endPaid ends the active or revoked key a refunded or disputed payment bought, and reports
// false for a payment no key has.
func (s *Shop) endPaid(ctx context.Context, ev orders.PaymentEvent) (bool, error) {
	status, ok := endings[ev.Type]
	if !ok || ev.PaymentIntent == "" {
		return false, nil
	}
	k, err := s.keys.one(ctx, "payment_intent", ev.PaymentIntent)
	if err == ErrNotFound {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	ended, err := s.keys.db.Changed(ctx, "ending a key whose payment was refunded or disputed", `UPDATE credit_keys
		SET status = ?, revoked_at = ? WHERE id = ? AND status IN ('active', 'revoked') AND status <> ?`,
		status, millis(s.cfg.Now()), k.ID, status)
	if err == nil && ended {
		s.log.Warn("API key ended: its payment was refunded or disputed at the provider", "credit", k.ID,
			"event", ev.Type, "status", status, "balance", k.Balance)
	}
	return true, err
}

// paidAsBought: the session paid the purchase's amount in its currency (a session that took
// nothing, or another amount, did not).
func paidAsBought(k Key, session providers.CheckoutSession) bool {
	return session.AmountTotal == k.Amount && strings.EqualFold(session.Currency, k.Currency)
}

// confirm turns a paid purchase into an active key, once: the webhook and the page's
// lookup may both come. A payment that is not the purchase's amount is refunded whole
// (when it took anything) and makes no key.
func (s *Shop) confirm(ctx context.Context, k Key, session providers.CheckoutSession) error {
	if k.Status != StatusAwaiting && k.Status != StatusExpired {
		s.ensureLetter(ctx, k)
		return nil
	}
	if !paidAsBought(k, session) {
		s.log.Error("paid amount differs from the credit bought, refunding", "credit", k.ID,
			"paid", session.AmountTotal, "currency", session.Currency, "amount", k.Amount)
		if session.AmountTotal > 0 {
			if err := s.payments.Refund(ctx, session.PaymentIntent, "credit-mismatch-"+k.ID); err != nil {
				return err
			}
		}
		return s.keys.db.Update(ctx, "refunding a mismatched credit payment", `UPDATE credit_keys SET status = 'refunded',
			payment_intent = ?, refunded = ? WHERE id = ? AND status IN ('awaiting_payment', 'expired')`,
			session.PaymentIntent, session.AmountTotal, k.ID)
	}
	secret := newSecret()
	sealed, err := s.seal.seal(ctx, k.ID, secret)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	won, err := s.keys.db.Changed(ctx, "activating a credit key", `UPDATE credit_keys SET status = 'active', key_hash = ?,
		key_sealed = ?, key_last4 = ?, balance = amount * 1000, payment_intent = ?, paid_at = ?, expires_at = ?
		WHERE id = ? AND status IN ('awaiting_payment', 'expired')`,
		hashSecret(secret), sealed, secret[len(secret)-4:], session.PaymentIntent, millis(now), millis(now.Add(s.cfg.TTL)), k.ID)
	if err != nil || !won {
		return err
	}
	s.log.Info("credit paid, key made", "credit", k.ID, "amount", k.Amount)
	k, err = s.keys.byID(ctx, k.ID)
	if err != nil {
		return err
	}
	s.ensureLetter(ctx, k)
	return nil
}

// Reveal is what the confirmation page is told of a purchase.
type Reveal struct {
	Pending   bool   // not paid yet
	Key       string // in full the first time only, masked after
	Full      bool
	Balance   int64 // thousandths of a cent
	Currency  string
	ExpiresAt time.Time
}

// Result looks a purchase up by its checkout session: pending until paid (the provider is
// asked while the row says unpaid, at most once every askEvery a session: the page polls
// it every 1.5 s), then the key, in full in the first answer only.
func (s *Shop) Result(ctx context.Context, sessionID string) (Reveal, error) {
	k, err := s.keys.one(ctx, "session_id", sessionID)
	if err != nil {
		return Reveal{}, err
	}
	if k.Status == StatusAwaiting || k.Status == StatusExpired {
		if !s.asked.due(sessionID, s.cfg.Now()) {
			return Reveal{Pending: true}, nil
		}
		session, err := s.payments.GetCheckout(ctx, sessionID)
		if err != nil {
			return Reveal{}, fmt.Errorf("verifying the session of credit %s: %w", k.ID, err)
		}
		if !session.Paid() {
			return Reveal{Pending: true}, nil
		}
		if err := s.confirm(ctx, k, session); err != nil {
			return Reveal{}, err
		}
		if k, err = s.keys.byID(ctx, k.ID); err != nil {
			return Reveal{}, err
		}
	}
	if k.Status == StatusRefunded && k.PaidAt.IsZero() {
		return Reveal{}, input("order_refunded", "the payment differs from the credit bought and was refunded")
	}
	s.ensureLetter(ctx, k)
	r := Reveal{Key: k.Masked(), Balance: k.Balance, Currency: k.Currency, ExpiresAt: k.ExpiresAt}
	won, err := s.keys.db.Changed(ctx, "showing a credit key", `UPDATE credit_keys SET shown_at = ? WHERE id = ? AND shown_at = 0`,
		millis(s.cfg.Now()), k.ID)
	if err != nil || !won {
		return r, err
	}
	secret, err := s.seal.open(ctx, k.ID, k.sealed)
	if errors.Is(err, errForgotten) {
		// Never shown, and erased keepUnshown after its payment (forgetStale): masked.
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.Key = secret
	r.Full = true
	s.forget(ctx, k.ID)
	return r, nil
}

// Cents writes thousandths of a cent as cents (11880 → 11.88) for JSON.
func Cents(milli int64) float64 { return float64(milli) / 1000 }

// askEvery is how often the provider is asked about one unpaid session, on this node: the
// page polls every 1.5 s, and the provider's webhook usually tells first.
const askEvery = 5 * time.Second

// asked remembers when each unpaid session was last asked of the provider.
type asked struct {
	mu sync.Mutex
	at map[string]time.Time
}

// due reports whether session may be asked at now, and notes it asked if so; sessions
// asked more than askEvery ago are forgotten.
func (a *asked) due(session string, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if last, ok := a.at[session]; ok && now.Sub(last) < askEvery {
		return false
	}
	for s, last := range a.at {
		if now.Sub(last) >= askEvery {
			delete(a.at, s)
		}
	}
	if a.at == nil {
		a.at = map[string]time.Time{}
	}
	a.at[session] = now
	return true
}
