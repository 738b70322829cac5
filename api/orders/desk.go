package orders

import (
	"context"
	"fmt"
	"log/slog"

	"parla/api/orders/keylock"
	"parla/providers"
	"parla/providers/speechlang"
	"parla/providers/texts"
)

// Desk takes orders: it quotes, validates, prices from the server's own facts, stores the
// order awaiting payment and opens a hosted checkout bound to it. Transcription orders
// are in desk_transcript.go; what they are for (an upload, a video link) is measured and
// priced first by the Intake.
type Desk struct {
	cfg      Config
	orders   *Store
	uploads  *Uploads
	services services
	intake   *Intake
	payments providers.Payments
	// Readers are the speech engines' languages, and which engine reads which.
	Readers *Readers
	// translator, when set, says whether the transcription engine can translate.
	translator providers.TranslationChecker
	observer   Observer
	log        *slog.Logger
	keys       keylock.Locks // one checkout at a time per order key (desk_key.go): two tabs clicking Pay at once
}

// Available reports why a service cannot take orders, or nil when it can.
func (d *Desk) Available(svc Service) error {
	return d.services.available(svc)
}

// Translates reports nil when an English translation can be ordered from the transcription
// engine, or why not.
func (d *Desk) Translates() error {
	if d.translator == nil {
		return nil
	}
	return d.translator.Translates()
}

// checkTranslation refuses a translation the engine cannot make, before anybody pays.
func (d *Desk) checkTranslation(translate bool) error {
	if !translate {
		return nil
	}
	if err := d.Translates(); err != nil {
		d.log.Debug("translation refused", "err", err)
		return bad("translation_unavailable", "this service cannot translate into English here; order a transcript instead")
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
	// Language is the code a text-to-speech order will be spoken in.
	Language string
}

// TTSRequest is a visitor's text-to-speech order as the page sends it.
type TTSRequest struct {
	Params      TTSParams
	Email       string
	EmailVerify string
	Locale      string
	// Key is the page's order key (desk_key.go); "" for none.
	Key string
	// Language is the BCP-47 code the visitor chose for the text; empty means detect it.
	Language       string
	ClientAmount   *int64 // the page's own price, if it sent one
	ClientCurrency string
}

// QuoteTTS prices a text.
func (d *Desk) QuoteTTS(text string) int64 {
	return d.cfg.Pricing.Quote(TTS, CountChars(text))
}

// TTSQuote is what the page shows before payment: the price and the language the text
// will be spoken in.
type TTSQuote struct {
	Chars    int64
	Amount   int64
	Currency string
	Language string // "" when the engine names no languages
	Detected bool   // the language was detected, not chosen
	Mixed    bool   // paragraphs in more than one language
	// Readers say which engine reads which of the text's languages; nil with one engine.
	// The price is the same whatever engine reads.
	Readers []Reader
}

// QuoteSpeech prices a text and tells the language it will be spoken in: chosen (a
// BCP-47 code), or detected, with the visitor's interface language for a text whose
// language cannot be told. A language or script the engine lacks is an InputError
// language_unsupported.
func (d *Desk) QuoteSpeech(text, chosen, locale string) (TTSQuote, error) {
	n := CountChars(text)
	q := TTSQuote{Chars: n, Amount: d.cfg.Pricing.Quote(TTS, n), Currency: d.cfg.Pricing.Currency}
	if Unspeakable(text) {
		return q, bad("empty_text", "the text has nothing to speak")
	}
	if n > d.cfg.TTS.MaxChars {
		return q, bad("text_too_long", "the text has %d characters; the maximum is %d", n, d.cfg.TTS.MaxChars)
	}
	r, err := d.Readers.settle(text, chosen, locale)
	if err != nil {
		return q, err
	}
	q.Language, q.Detected, q.Mixed = r.Language, r.Detected, len(r.Spans) > 1
	q.Readers = d.Readers.ofSpans(r.Spans)
	return q, nil
}

// languageTag turns an interface code a visitor may send (jp) into its language's code
// for the speech engine, which knows language codes only; any other code passes as sent.
func languageTag(code string) string {
	n := speechlang.Normalize(code)
	if tag := texts.LanguageCode(n, false); tag != n {
		return tag
	}
	return code
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
	lang, err := d.Readers.settle(params.Text, req.Language, locale)
	if err != nil {
		return Checkout{}, err
	}
	unlock, err := d.holdKey(ctx, TTS, req.Key)
	if err != nil {
		return Checkout{}, err
	}
	defer unlock()
	params.Language, params.Mixed = lang.Language, len(lang.Spans) > 1
	co, err := d.take(ctx, sale{svc: TTS, params: params, quantity: CountChars(params.Text),
		amount: d.QuoteTTS(params.Text), email: email, locale: locale, key: req.Key,
		clientAmount: req.ClientAmount, clientCurrency: req.ClientCurrency})
	co.Language = params.Language
	return co, err
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
// Its name and description are set in the order's interface language (products.go).
type product struct {
	name, description string
	svc               Service
	quantity          int64
}

// sale is what the tail of taking an order needs, whatever the service: the order's
// stored parameters, the quantity its line item names, the server's price, and the
// visitor's contact, order key and own price.
type sale struct {
	svc            Service
	params         any
	quantity       int64
	amount         int64
	email, locale  string
	key            string // the page's order key (desk_key.go); "" for none
	clientAmount   *int64
	clientCurrency string
	// bind, when set, ties what the order consumes (an upload) to it before its checkout
	// opens.
	bind func(Order) error
}

// take is the tail of taking an order, one for the three services: the visitor's price
// held against the server's, the order made under its key and bound to what it consumes,
// and its checkout opened.
func (d *Desk) take(ctx context.Context, s sale) (Checkout, error) {
	if err := d.checkClientPrice(s.amount, s.clientAmount, s.clientCurrency); err != nil {
		return Checkout{}, err
	}
	o, err := d.newOrder(s.svc, s.params, s.email, s.locale, s.amount)
	if err != nil {
		return Checkout{}, err
	}
	o.Key = s.key
	if s.bind != nil {
		if err := s.bind(o); err != nil {
			return Checkout{}, err
		}
	}
	return d.openCheckout(ctx, o, productFor(s.svc, s.quantity))
}

func productFor(svc Service, quantity int64) product {
	return product{svc: svc, quantity: quantity}
}

// openCheckout stores the order and opens the hosted checkout bound to it (order id in the
// session's metadata and client reference).
func (d *Desk) openCheckout(ctx context.Context, o Order, p product) (Checkout, error) {
	if err := d.orders.Create(ctx, o); err != nil {
		return Checkout{}, err
	}
	p = p.localized(o.Locale)
	s, err := d.payments.CreateCheckout(ctx, providers.CheckoutRequest{
		OrderID: o.ID, Email: o.Email, Locale: o.Locale,
		Name: p.name, Description: p.description, ImageURL: d.cfg.ImageURL,
		Amount: o.Amount, Currency: o.Currency,
		SuccessURL: d.cfg.PublicURL + d.cfg.Routes.Success[o.Service] + "?session_id={CHECKOUT_SESSION_ID}",
		CancelURL:  d.cfg.PublicURL + d.cfg.Routes.Cancel[o.Service],
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
	d.observer.Observe(Event{Kind: EventCreated, Service: o.Service})
	return Checkout{OrderID: o.ID, SessionID: s.ID, URL: s.URL, Amount: o.Amount, Currency: o.Currency}, nil
}
