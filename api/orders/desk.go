package orders

import (
	"context"
	"fmt"
	"log/slog"

	"parla/providers"
)

// Desk takes orders: it quotes, validates, prices from the server's own facts, stores the
// order awaiting payment and opens a hosted checkout bound to it. Transcription orders
// (uploads and video links) are in desk_transcript.go.
type Desk struct {
	cfg       Config
	orders    *Store
	uploads   *Uploads
	producers map[Service]Producer
	payments  providers.Payments
	audio     AudioChecker
	links     LinkResolver
	log       *slog.Logger
}

// Available reports why a service cannot take orders, or nil when it can.
func (d *Desk) Available(svc Service) error {
	p, ok := d.producers[svc]
	if !ok {
		return fmt.Errorf("%w: %s is not configured", ErrServiceUnavailable, svc)
	}
	if err := p.Available(); err != nil {
		return fmt.Errorf("%w: %w", ErrServiceUnavailable, err)
	}
	return nil
}

// Checkout is what the visitor's browser needs to go and pay.
type Checkout struct {
	OrderID   string
	SessionID string
	URL       string
	Amount    int64
	Currency  string
}

// TTSRequest is a visitor's text-to-speech order as the page sends it.
type TTSRequest struct {
	Params         TTSParams
	Email          string
	EmailVerify    string
	Locale         string
	ClientAmount   *int64 // the page's own price, if it sent one
	ClientCurrency string
}

// QuoteTTS prices a text.
func (d *Desk) QuoteTTS(text string) int64 {
	return d.cfg.Pricing.Quote(TTS, CountChars(text))
}

// CreateTTS validates an order, prices it, stores it and opens a checkout for it.
func (d *Desk) CreateTTS(ctx context.Context, req TTSRequest) (Checkout, error) {
	params, err := d.cfg.TTS.ValidateTTS(req.Params)
	if err != nil {
		return Checkout{}, err
	}
	email, locale, err := validateContact(req.Email, req.EmailVerify, req.Locale)
	if err != nil {
		return Checkout{}, err
	}
	if err := d.Available(TTS); err != nil {
		return Checkout{}, err
	}
	amount := d.QuoteTTS(params.Text)
	if err := d.checkClientPrice(amount, req.ClientAmount, req.ClientCurrency); err != nil {
		return Checkout{}, err
	}
	o, err := d.newOrder(TTS, params, email, locale, amount)
	if err != nil {
		return Checkout{}, err
	}
	return d.openCheckout(ctx, o, productFor(TTS, CountChars(params.Text)))
}

func (d *Desk) checkClientPrice(amount int64, clientAmount *int64, clientCurrency string) error {
	if clientAmount != nil && (*clientAmount != amount ||
		(clientCurrency != "" && clientCurrency != d.cfg.Pricing.Currency)) {
		return fmt.Errorf("%w: page says %d, server says %d %s",
			ErrPriceMismatch, *clientAmount, amount, d.cfg.Pricing.Currency)
	}
	return nil
}

// newOrder builds an unpaid order with its parameters encoded.
func (d *Desk) newOrder(svc Service, params any, email, locale string, amount int64) (Order, error) {
	raw, err := encodeParams(params)
	if err != nil {
		return Order{}, err
	}
	return Order{
		ID: newID(), Service: svc, Status: AwaitingPayment, Params: raw, Email: email,
		Locale: locale, Amount: amount, Currency: d.cfg.Pricing.Currency, CreatedAt: d.cfg.Now(),
	}, nil
}

// product is the line item the hosted checkout shows.
type product struct{ name, description, successPath, cancelPath string }

func productFor(svc Service, quantity int64) product {
	switch svc {
	case STT:
		return product{"Speech-to-text", "Transcription generation", "/sst-payment/success", "/sst"}
	case VTT:
		return product{"Video to text", "Transcription generation", "/vtt-payment/success", "/vtt"}
	}
	return product{"Text-to-speech", fmt.Sprintf("Voice generation, %d characters", quantity), "/payment/success", "/tts"}
}

// openCheckout stores the order and opens the hosted checkout bound to it (order id in the
// session's metadata and client reference).
func (d *Desk) openCheckout(ctx context.Context, o Order, p product) (Checkout, error) {
	if err := d.orders.Create(ctx, o); err != nil {
		return Checkout{}, err
	}
	s, err := d.payments.CreateCheckout(ctx, providers.CheckoutRequest{
		OrderID: o.ID, Email: o.Email, Locale: o.Locale,
		Name: p.name, Description: p.description, ImageURL: d.cfg.ImageURL,
		Amount: o.Amount, Currency: o.Currency,
		SuccessURL: d.cfg.PublicURL + p.successPath + "?session_id={CHECKOUT_SESSION_ID}",
		CancelURL:  d.cfg.PublicURL + p.cancelPath,
		ExpiresAt:  d.cfg.Now().Add(d.cfg.CheckoutTTL),
	})
	if err != nil {
		if _, err2 := d.orders.Expire(ctx, o.ID); err2 != nil {
			d.log.Error("expiring order after checkout failure", "order", o.ID, "err", err2)
		}
		return Checkout{}, fmt.Errorf("creating checkout for order %s: %w", o.ID, err)
	}
	if err := d.orders.SetSession(ctx, o.ID, s.ID); err != nil {
		return Checkout{}, err
	}
	d.log.Info("order created", "order", o.ID, "service", o.Service, "amount", o.Amount)
	return Checkout{OrderID: o.ID, SessionID: s.ID, URL: s.URL, Amount: o.Amount, Currency: o.Currency}, nil
}
