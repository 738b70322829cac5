package orders

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"parla/providers"
)

// Letters renders the messages a visitor receives, in the order's locale.
type Letters interface {
	Delivered(o Order, link string) (providers.Message, error)
	Refunded(o Order) (providers.Message, error)
}

// Config tunes the order book. Zero values take the defaults given.
type Config struct {
	PublicURL   string        // absolute base for links and checkout return URLs
	LinkTTL     time.Duration // how long a download link works (10 days)
	CheckoutTTL time.Duration // how long the hosted checkout accepts payment (30 min)
	UnpaidTTL   time.Duration // when unpaid orders are swept (24 h)
	TempDir     string        // scratch space for results being produced
	TempTTL     time.Duration // leftover scratch files older than this are swept (6 h)
	UploadDir   string        // accepted uploads, one file per upload id
	UploadTTL   time.Duration // unpaid uploads are swept after this (24 h)
	// VTTMaxDuration is the longest video taken for transcription (3 h).
	VTTMaxDuration time.Duration
	TTS            TTSLimits
	Pricing        Pricing
	ImageURL       string // line-item image shown on the hosted checkout

	MaxAttempts   int           // fulfilment tries before a refund (5)
	RetryBase     time.Duration // first retry delay, doubled each time (5 s)
	PollInterval  time.Duration // how often workers look for jobs (100 ms)
	JobTimeout    time.Duration // longest a single fulfilment may run (2 h: a long video on a CPU)
	SweepInterval time.Duration // how often the sweeper runs (10 min)
	Workers       int           // concurrent fulfilments (2)
	Now           func() time.Time
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.LinkTTL, 10*24*time.Hour)
	def(&c.CheckoutTTL, 30*time.Minute)
	def(&c.UnpaidTTL, 24*time.Hour)
	def(&c.TempTTL, 6*time.Hour)
	def(&c.UploadTTL, 24*time.Hour)
	def(&c.VTTMaxDuration, 3*time.Hour)
	def(&c.RetryBase, 5*time.Second)
	def(&c.PollInterval, 100*time.Millisecond)
	def(&c.JobTimeout, 2*time.Hour)
	def(&c.SweepInterval, 10*time.Minute)
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Pricing.Rules == nil {
		c.Pricing = DefaultPricing()
	}
}

// Deps are the outside parts the order book drives.
type Deps struct {
	DB       *sql.DB
	Payments providers.Payments
	Storage  providers.Storage
	Mailer   providers.Mailer
	Letters  Letters
	Speaker  providers.Speaker
	// Transcriber serves audio- and video-to-text; Audio checks uploads and fetched audio;
	// Links analyses and fetches video links. Without them those services are closed.
	Transcriber providers.Transcriber
	Audio       AudioChecker
	Links       LinkResolver
	Log         *slog.Logger
}

// Book takes orders, binds them to payments, fulfils paid ones through River jobs and
// sweeps what has lapsed.
type Book struct {
	cfg   Config
	deps  Deps
	store *Store
	log   *slog.Logger
	queue *river.Client[*sql.Tx]
}

// New migrates the database (orders and River's tables) and builds the book with its
// workers. Call Start to begin working jobs.
func New(ctx context.Context, cfg Config, deps Deps) (*Book, error) {
	cfg.defaults()
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	store, err := NewStore(ctx, deps.DB)
	if err != nil {
		return nil, err
	}
	driver := riversqlite.New(deps.DB)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return nil, fmt.Errorf("preparing job queue migrations: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("migrating job queue: %w", err)
	}
	b := &Book{cfg: cfg, deps: deps, store: store, log: deps.Log}

	workers := river.NewWorkers()
	river.AddWorker(workers, &fulfilWorker{book: b})
	river.AddWorker(workers, &refundWorker{book: b})
	river.AddWorker(workers, &sweepWorker{book: b})
	b.queue, err = river.NewClient(driver, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:           workers,
		MaxAttempts:       cfg.MaxAttempts,
		RetryPolicy:       doublingRetry{base: cfg.RetryBase, now: cfg.Now},
		FetchPollInterval: cfg.PollInterval,
		FetchCooldown:     min(cfg.PollInterval, 20*time.Millisecond),
		JobTimeout:        cfg.JobTimeout,
		Logger:            deps.Log.With("component", "river"),
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(
			river.PeriodicInterval(cfg.SweepInterval),
			func() (river.JobArgs, *river.InsertOpts) { return SweepArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true},
		)},
	})
	if err != nil {
		return nil, fmt.Errorf("building job queue: %w", err)
	}
	return b, nil
}

// Store returns the book's order store (for read-only lookups such as download links).
func (b *Book) Store() *Store { return b.store }

// Config returns the book's effective configuration.
func (b *Book) Config() Config { return b.cfg }

// Start begins working jobs in the background until Stop.
func (b *Book) Start(ctx context.Context) error {
	if err := b.queue.Start(ctx); err != nil {
		return fmt.Errorf("starting job queue: %w", err)
	}
	return nil
}

// Stop lets running jobs finish until ctx ends, then cancels them; cancelled jobs go
// back to the queue and run again at the next start.
func (b *Book) Stop(ctx context.Context) error {
	err := b.queue.Stop(ctx)
	if err == nil {
		return nil
	}
	cancelCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err2 := b.queue.StopAndCancel(cancelCtx); err2 != nil {
		return fmt.Errorf("stopping job queue: %w", errors.Join(err, err2))
	}
	return nil
}

// Available reports why a service cannot take orders, or nil when it can.
func (b *Book) Available(svc Service) error {
	var engine interface{ Available() error }
	switch {
	case svc == TTS && b.deps.Speaker != nil:
		engine = b.deps.Speaker
	case svc == STT && b.deps.Transcriber != nil && b.deps.Audio != nil && b.cfg.UploadDir != "":
		engine = b.deps.Transcriber
	case svc == VTT && b.deps.Transcriber != nil && b.deps.Audio != nil && b.deps.Links != nil:
		engine = b.deps.Transcriber
	default:
		return fmt.Errorf("%w: %s is not configured", ErrServiceUnavailable, svc)
	}
	if err := engine.Available(); err != nil {
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
func (b *Book) QuoteTTS(text string) int64 {
	return b.cfg.Pricing.Quote(TTS, CountChars(text))
}

// CreateTTS validates an order, prices it, stores it and opens a checkout for it.
func (b *Book) CreateTTS(ctx context.Context, req TTSRequest) (Checkout, error) {
	params, err := b.cfg.TTS.ValidateTTS(req.Params)
	if err != nil {
		return Checkout{}, err
	}
	email, err := ValidateEmail(req.Email, req.EmailVerify)
	if err != nil {
		return Checkout{}, err
	}
	locale, err := ValidateLocale(req.Locale)
	if err != nil {
		return Checkout{}, err
	}
	if err := b.Available(TTS); err != nil {
		return Checkout{}, err
	}
	amount := b.QuoteTTS(params.Text)
	if err := b.checkClientPrice(amount, req.ClientAmount, req.ClientCurrency); err != nil {
		return Checkout{}, err
	}
	o, err := b.newOrder(TTS, params, email, locale, amount)
	if err != nil {
		return Checkout{}, err
	}
	return b.openCheckout(ctx, o, productFor(TTS, CountChars(params.Text)))
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

func (b *Book) openCheckout(ctx context.Context, o Order, p product) (Checkout, error) {
	if err := b.store.Create(ctx, o); err != nil {
		return Checkout{}, err
	}
	s, err := b.deps.Payments.CreateCheckout(ctx, providers.CheckoutRequest{
		OrderID: o.ID, Email: o.Email, Locale: o.Locale,
		Name: p.name, Description: p.description, ImageURL: b.cfg.ImageURL,
		Amount: o.Amount, Currency: o.Currency,
		SuccessURL: b.cfg.PublicURL + p.successPath + "?session_id={CHECKOUT_SESSION_ID}",
		CancelURL:  b.cfg.PublicURL + p.cancelPath,
		ExpiresAt:  b.cfg.Now().Add(b.cfg.CheckoutTTL),
	})
	if err != nil {
		if _, err2 := b.store.Expire(ctx, o.ID); err2 != nil {
			b.log.Error("expiring order after checkout failure", "order", o.ID, "err", err2)
		}
		return Checkout{}, fmt.Errorf("creating checkout for order %s: %w", o.ID, err)
	}
	if err := b.store.SetSession(ctx, o.ID, s.ID); err != nil {
		return Checkout{}, err
	}
	b.log.Info("order created", "order", o.ID, "service", o.Service, "amount", o.Amount)
	return Checkout{OrderID: o.ID, SessionID: s.ID, URL: s.URL, Amount: o.Amount, Currency: o.Currency}, nil
}

// Lookup is a checkout session with the order it pays for.
type Lookup struct {
	Session providers.CheckoutSession
	Order   Order
}

// Lookup verifies a session with the payment provider and returns it with its order.
// A paid session starts fulfilment if the webhook has not done so yet.
func (b *Book) Lookup(ctx context.Context, svc Service, sessionID string) (Lookup, error) {
	o, err := b.orderFor(ctx, svc, sessionID)
	if err != nil {
		return Lookup{}, err
	}
	s, err := b.deps.Payments.GetCheckout(ctx, sessionID)
	if err != nil {
		return Lookup{}, fmt.Errorf("verifying session of order %s: %w", o.ID, err)
	}
	if s.OrderID != "" && s.OrderID != o.ID {
		return Lookup{}, fmt.Errorf("session of order %s names order %s: %w", o.ID, s.OrderID, ErrNotFound)
	}
	if s.Paid() && !o.Paid() {
		if err := b.confirmPaid(ctx, o, s.PaymentIntent); err != nil {
			return Lookup{}, err
		}
		if o, err = b.store.Get(ctx, o.ID); err != nil {
			return Lookup{}, err
		}
	}
	return Lookup{Session: s, Order: o}, nil
}

// Result returns the order paid through a session. It fails with ErrUnpaid when the
// provider does not say it is paid.
func (b *Book) Result(ctx context.Context, svc Service, sessionID string) (Order, error) {
	o, err := b.orderFor(ctx, svc, sessionID)
	if err != nil {
		return Order{}, err
	}
	if o.Paid() {
		return o, nil
	}
	l, err := b.Lookup(ctx, svc, sessionID)
	if err != nil {
		return Order{}, err
	}
	if !l.Order.Paid() {
		return l.Order, ErrUnpaid
	}
	return l.Order, nil
}

func (b *Book) orderFor(ctx context.Context, svc Service, sessionID string) (Order, error) {
	o, err := b.store.BySession(ctx, sessionID)
	if err != nil {
		return o, err
	}
	if o.Service != svc {
		return o, ErrWrongService
	}
	return o, nil
}

// PaymentEvent is a verified notification from the payment provider.
type PaymentEvent struct {
	ID      string
	Type    string
	Session providers.CheckoutSession
}

// HandleEvent acts on a verified webhook event once; a repeated event id returns
// ErrDuplicateEvent. Events may arrive in any order.
func (b *Book) HandleEvent(ctx context.Context, ev PaymentEvent) error {
	fresh, err := b.store.RecordEvent(ctx, ev.ID, ev.Type, b.cfg.Now())
	if err != nil {
		return err
	}
	if !fresh {
		return ErrDuplicateEvent
	}
	if err := b.applyEvent(ctx, ev); err != nil {
		// Forget it so that the provider's retry is handled again.
		if err2 := b.store.ForgetEvent(ctx, ev.ID); err2 != nil {
			b.log.Error("forgetting failed event", "event", ev.ID, "err", err2)
		}
		return err
	}
	return nil
}

func (b *Book) applyEvent(ctx context.Context, ev PaymentEvent) error {
	if ev.Session.ID == "" {
		return nil
	}
	o, err := b.store.BySession(ctx, ev.Session.ID)
	if errors.Is(err, ErrNotFound) {
		b.log.Warn("webhook for an unknown session", "event", ev.ID, "type", ev.Type)
		return nil
	}
	if err != nil {
		return err
	}
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		if ev.Session.Paid() {
			return b.confirmPaid(ctx, o, ev.Session.PaymentIntent)
		}
	case "checkout.session.expired", "checkout.session.async_payment_failed":
		if _, err := b.store.Expire(ctx, o.ID); err != nil {
			return err
		}
	}
	return nil
}

// confirmPaid records the payment (once) and makes sure the one fulfilment job exists.
func (b *Book) confirmPaid(ctx context.Context, o Order, paymentIntent string) error {
	changed, err := b.store.MarkPaid(ctx, o.ID, paymentIntent, b.cfg.Now())
	if err != nil {
		return err
	}
	if changed {
		b.log.Info("order paid", "order", o.ID)
	}
	if _, err := b.queue.Insert(ctx, FulfilArgs{OrderID: o.ID}, nil); err != nil {
		return fmt.Errorf("queueing fulfilment of order %s: %w", o.ID, err)
	}
	return nil
}

// Link is the public download URL of a delivered order.
func (b *Book) Link(o Order) string {
	if o.LinkToken == "" {
		return ""
	}
	return b.cfg.PublicURL + "/d/" + o.LinkToken
}

func newID() string { return randomString(16) }

func randomString(n int) string {
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on Linux
	}
	return base64.RawURLEncoding.EncodeToString(buf)
}

// ErrLinkExpired is returned by Download for a link past its 10 days or a swept result.
var ErrLinkExpired = errors.New("download link expired")

// Download resolves a download token to its delivered order, refusing lapsed links.
func (b *Book) Download(ctx context.Context, token string) (Order, error) {
	o, err := b.store.ByLinkToken(ctx, token)
	if err != nil {
		return o, err
	}
	if o.ResultKey == "" || !b.cfg.Now().Before(o.LinkExpiresAt) {
		return o, ErrLinkExpired
	}
	return o, nil
}
