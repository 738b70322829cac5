package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api"
	"parla/api/admin"
	"parla/api/credit"
	"parla/api/health"
	"parla/api/metrics"
	"parla/api/orders"
	v1 "parla/api/v1"
	"parla/media"
	"parla/media/links"
	"parla/providers"
	"parla/providers/espeak"
	"parla/providers/mail"
	"parla/providers/openai"
	"parla/providers/speechroute"
	"parla/providers/sqldb"
	"parla/providers/storage"
	"parla/providers/stripe"
	"parla/providers/whisper"
	"parla/webui"
)

// App is the running product: HTTP, the order book and its database.
type App struct {
	cfg  Config
	log  *slog.Logger
	db   *sqldb.DB
	book *orders.Book
	http *fiber.App
	test *stripe.TestCheckout // nil when Stripe is configured
	// metrics count what the app does; served on /metrics or on METRICS_ADDR (ops.go).
	metrics *metrics.Metrics
	// api is Parla from code (api/v1): /v1 paid from API credit (api/credit).
	api *v1.API
	// keys are the API's keys as the admin area handles them.
	keys *credit.Keyring
	// ledger holds the API calls' prices (set once the credit is built): the reconciler
	// gives back the holds of processes that died (releaseDeadHolds).
	ledger *credit.Ledger
	// shop sells the API's keys: the reconciler sends their letters again and erases their
	// sealed keys within bounds (creditLetters).
	shop *credit.Shop
	// admin is the admin area (/admin); closed unless ADMIN_PASSWORD_HASH or ADMIN_TOKEN is set.
	admin *admin.Admin
	// turns put the transcription previews after paid work (orders.EngineTurns).
	turns *orders.EngineTurns
	// closers are released last at shutdown (the link relay, the whisper model).
	closers []io.Closer
	// sttBackend is where the in-process speech-to-text engine computes ("CPU, 8 threads",
	// "CUDA0 (…)"), "" for another engine: the startup log and /readyz say it.
	sttBackend string
	// servers are the OpenAI-compatible servers the engines call, one per base URL: asked
	// at boot and by /readyz (servers.go).
	servers []health.Server
}

// emptyDir removes everything inside dir and says how many entries went.
func emptyDir(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return len(entries), errors.Join(errs...)
}

// build makes every part from the configuration and wires them together.
func build(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	tmpDir := filepath.Join(cfg.DataDir, "tmp")
	for _, d := range []string{cfg.DataDir, tmpDir, filepath.Join(cfg.DataDir, "uploads")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	// The database first: on SQLite its lock refuses a second process on this DATA_DIR
	// before it touches the first one's scratch space.
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// One process owns DATA_DIR: scratch files found at start belong to one that died
	// (half-produced results, half-received uploads, fetched video audio).
	if n, err := emptyDir(tmpDir); err != nil {
		log.Warn("clearing scratch space", "err", err)
	} else if n > 0 {
		log.Info("scratch files of a previous process removed", "files", n)
	}
	if db.Dialect == sqldb.Postgres && cfg.SMTPURL == "" {
		log.Warn("DATABASE_URL is set without SMTP_URL: letters go to this node's DATA_DIR/outbox, " +
			"which the other nodes and the visitors never see; a cluster needs SMTP_URL")
	}
	a := &App{cfg: cfg, log: log, db: db}
	if err := a.wire(ctx, tmpDir); err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

// openDatabase opens PostgreSQL at DATABASE_URL (shared by every node), or SQLite in
// DATA_DIR (one node).
func openDatabase(ctx context.Context, cfg Config) (*sqldb.DB, error) {
	if cfg.DatabaseURL == "" {
		return sqldb.OpenSQLite(filepath.Join(cfg.DataDir, "parla.db"))
	}
	return sqldb.OpenPostgres(ctx, cfg.DatabaseURL, sqldb.PostgresConfig{MaxConns: int32(cfg.DBMaxConns)})
}

// wire builds the parts of the product (storage, mail, metrics, engines, links, payments,
// the order book, the admin area, HTTP) and hands each its dependencies.
func (a *App) wire(ctx context.Context, tmpDir string) error {
	cfg := a.cfg
	store, err := newStorage(ctx, cfg)
	if err != nil {
		return err
	}
	mailer, err := newMailer(cfg)
	if err != nil {
		return err
	}
	a.metrics = metrics.New(metrics.Config{
		Version: Version, DataDir: cfg.DataDir, JobTimeout: cfg.JobTimeout, Gauges: bookGauges{a}, Log: a.log,
		Engines: cfg.Engines(),
	})
	runner := media.New(media.Config{TempDir: tmpDir})
	speaker, err := newSpeaker(cfg, runner, tmpDir)
	if err != nil {
		return err
	}
	transcriber := newTranscriber(cfg, runner, tmpDir)
	if c, ok := transcriber.(io.Closer); ok {
		a.closers = append(a.closers, c)
	}
	a.servers = health.Servers(speaker, transcriber)
	// Previews wait while paid transcriptions run: the order book's and the API's.
	a.turns = orders.NewEngineTurns()
	health.AskServers(ctx, a.servers, a.log)
	links, guard := newLinks(cfg, runner, a.metrics.LinkBytes)
	a.closers = append(a.closers, guard)
	// Closed engines are told in one block at start (closed.go); an open whisper says where it computes.
	if b, ok := transcriber.(providers.BackendNamer); ok && transcriber.Available() == nil && b.Backend() != "" {
		a.sttBackend = b.Backend()
		a.log.Info("whisper computes on "+a.sttBackend, "vad", cfg.WhisperVAD)
	}
	if cfg.AllowPrivateURLs {
		a.log.Warn("ALLOW_PRIVATE_URLS is set: video links may reach loopback and private addresses; never do this in production")
	}
	payments, webhooks, err := a.newPayments()
	if err != nil {
		return err
	}
	if err := a.newBook(ctx, tmpDir, payments, store, mailer, speaker, transcriber, runner, links); err != nil {
		return err
	}
	if err := a.newAPI(ctx, tmpDir, payments, mailer, speaker, transcriber, runner); err != nil {
		return err
	}
	if a.admin, err = newAdmin(ctx, cfg, a.book, a.keys, a.log); err != nil {
		return err
	}
	return a.newHTTP(store, speaker, webhooks)
}

// newPayments is Stripe when STRIPE_SECRET_KEY is set, else the built-in test checkout.
func (a *App) newPayments() (providers.Payments, providers.WebhookParser, error) {
	cfg := a.cfg
	if cfg.StripeSecretKey != "" {
		s := stripe.New(stripe.Config{SecretKey: cfg.StripeSecretKey, WebhookSecret: cfg.StripeWebhookSecret, BackendURL: cfg.StripeAPIBase})
		return s, s, nil
	}
	var err error
	if a.test, err = stripe.NewTestCheckout(a.db, cfg.PublicURL+api.TestCheckoutPrefix, time.Now); err != nil {
		return nil, nil, err
	}
	a.log.Warn("no STRIPE_SECRET_KEY: using the built-in test checkout; nobody is charged")
	return a.test, nil, nil
}

// newBook builds the order book over the parts wire made.
func (a *App) newBook(ctx context.Context, tmpDir string, payments providers.Payments, store providers.Storage,
	mailer providers.Mailer, speaker providers.Speaker, transcriber providers.Transcriber, runner *media.Runner,
	links *links.Cached) error {
	cfg := a.cfg
	var err error
	a.book, err = orders.New(ctx, orders.Config{
		PublicURL: cfg.PublicURL,
		Routes:    api.OrderRoutes(),
		TempDir:   tmpDir,
		UploadDir: filepath.Join(cfg.DataDir, "uploads"), UploadTTL: cfg.UploadTTL,
		UploadQuotaPerClient: cfg.UploadQuotaPerClient, UploadQuotaTotal: cfg.UploadQuotaTotal,
		LowDisk:        health.Short(cfg.DataDir, uint64(cfg.ReadyMinFree)),
		SharedUploads:  a.db.Dialect == sqldb.Postgres,
		VTTMaxDuration: cfg.VTTMaxDuration,
		STTMaxDuration: cfg.STTMaxDuration,
		Preview:        cfg.preview(),
		Pricing:        cfg.Pricing,
		ImageURL:       cfg.PublicURL + "/favicon.svg",
		TTS: orders.TTSLimits{Voices: providers.Voices, Formats: providers.SpeechFormats,
			MinSpeed: 0.25, MaxSpeed: 4, MaxChars: cfg.TTSMaxChars},
		Workers: cfg.Workers, MaxAttempts: cfg.MaxAttempts, RetryBase: cfg.RetryBase, JobTimeout: cfg.JobTimeout,
		RescueAfter: cfg.RescueAfter, NodeID: cfg.NodeID, HeartbeatEvery: cfg.HeartbeatEvery, NodeDeadAfter: cfg.NodeDeadAfter,
		SweepInterval: cfg.SweepInterval, ReconcileInterval: cfg.ReconcileInterval, Checkpoint: cfg.checkpoint,
		Reconcilers: []orders.Reconciler{{Name: "holds", Run: a.releaseDeadHolds}, {Name: "credit_letters", Run: a.creditLetters}},
	}, orders.Deps{
		DB: a.db, Payments: payments, Storage: store, Mailer: mailer, Letters: orders.MailLetters{},
		Speaker: speaker, Transcriber: transcriber, Audio: runner, Links: links, Turns: a.turns,
		Observer: a.metrics, Log: a.log,
	})
	return err
}

// newAPI builds Parla from code: the API's credit (its own tables on the app's database,
// its checkout sessions handed over by the Cashier) and /v1 over the book's engines and rules.
func (a *App) newAPI(ctx context.Context, tmpDir string, payments providers.Payments, mailer providers.Mailer,
	speaker providers.Speaker, transcriber providers.Transcriber, runner *media.Runner) error {
	cfg := a.cfg
	c, err := credit.New(ctx, credit.Config{PublicURL: cfg.PublicURL, Page: api.CreditPage, Success: api.CreditSuccess, MinAmount: cfg.CreditMin, MaxAmount: cfg.CreditMax,
		TTL: cfg.CreditTTL(), Currency: cfg.Pricing.Currency, ImageURL: cfg.PublicURL + "/favicon.svg", Holder: a.book.Holder()},
		credit.Deps{DB: a.db, Payments: payments, Mailer: mailer, Log: a.log})
	if err != nil {
		return err
	}
	a.book.Cashier.OtherSessions = c.Shop.HandleEvent
	a.keys, a.ledger, a.shop = c.Keyring, c.Ledger, c.Shop
	a.api = v1.New(v1.Config{RateLimit: cfg.RateLimit, MaxUploadBytes: cfg.MaxUploadBytes, TempDir: tmpDir,
		MaxTranscription: cfg.APIMaxTranscription},
		v1.Deps{Credit: c, Desk: a.book.Desk, Intake: a.book.Intake, Pricing: cfg.Pricing, Speaker: speaker,
			Transcriber: a.turns.Paid(transcriber), Media: runner, ClientOf: api.ClientKeyOf(cfg.TrustedProxies),
			Observe: a.metrics.APICall, Log: a.log})
	return nil
}

// releaseDeadHolds is the reconciler's step for the API credit: every call's hold whose
// process is not among the live ones (it died mid-call) is given back, and any older than
// the stale-hold bound. Nothing before the credit is built.
func (a *App) releaseDeadHolds(ctx context.Context) (int, error) {
	if a.ledger == nil {
		return 0, nil
	}
	live, err := a.book.LiveHolders(ctx)
	if err != nil {
		return 0, err
	}
	return a.ledger.ReleaseDead(ctx, live)
}

// creditLetters is the reconciler's step for the API keys' letters (credit.Shop.Reconcile).
// Nothing before the credit is built.
func (a *App) creditLetters(ctx context.Context) (int, error) {
	if a.shop == nil {
		return 0, nil
	}
	return a.shop.Reconcile(ctx)
}

// newHTTP builds the web server: the API, the pages and the embedded web UI.
func (a *App) newHTTP(store providers.Storage, speaker providers.Speaker, webhooks providers.WebhookParser) error {
	cfg := a.cfg
	ui, err := fs.Sub(webui.Dist, "dist")
	if err != nil {
		return fmt.Errorf("opening the embedded web UI: %w", err)
	}
	locales, err := fs.Sub(webui.Locales, "src/locales")
	if err != nil {
		return fmt.Errorf("opening the embedded locales: %w", err)
	}
	a.http = api.New(api.Config{
		Version: Version, PaymentMode: cfg.PaymentMode(), PublishableKey: cfg.StripePublishableKey,
		ContactEmail: cfg.ContactEmail,
		RateLimit:    cfg.RateLimit, TrustedProxies: cfg.TrustedProxies,
		SamplesDir:     filepath.Join(cfg.DataDir, "samples", cfg.speechCacheName()),
		PreviewsDir:    filepath.Join(cfg.DataDir, "previews", cfg.speechCacheName()),
		MaxUploadBytes: cfg.MaxUploadBytes, STTEngine: cfg.STTEngine, PublicURL: cfg.PublicURL,
		StreamedPaths: v1.UploadPaths,
	}, api.Deps{
		Book: a.book, Storage: store, Speaker: speaker, Test: a.test, Webhooks: webhooks, UI: ui, Locales: locales, Log: a.log,
		Ready: a.readiness(store).Ready, Count: a.metrics.Middleware(),
		Metrics: a.publicMetrics(), Authorized: a.admin.Authorized,
		Admin: func(app *fiber.App) { a.admin.Mount(app) },
		API:   a.api.Mount,
	})
	return nil
}

func newStorage(ctx context.Context, cfg Config) (providers.Storage, error) {
	if cfg.Storage == "minio" {
		return storage.NewMinIO(ctx, storage.MinIOConfig{
			Endpoint: cfg.MinIOEndpoint, AccessKey: cfg.MinIOAccessKey, SecretKey: cfg.MinIOSecretKey,
			Bucket: cfg.MinIOBucket, UseSSL: cfg.MinIOUseSSL, Region: cfg.MinIORegion,
			PublicEndpoint: cfg.MinIOPublicEndpoint,
		})
	}
	return storage.NewDisk(filepath.Join(cfg.DataDir, "files"))
}

func newMailer(cfg Config) (providers.Mailer, error) {
	if cfg.SMTPURL == "" {
		return mail.NewOutbox(filepath.Join(cfg.DataDir, "outbox"))
	}
	sc, err := mail.ParseSMTPURL(cfg.SMTPURL)
	if err != nil {
		return nil, fmt.Errorf("SMTP_URL: %w", err)
	}
	if sc.From == "" {
		sc.From = cfg.MailFrom
	}
	return mail.NewSMTP(sc)
}

// newSpeaker builds the text-to-speech engines TTS_ENGINE lists: one speaks every text;
// several share the texts out by language (providers/speechroute).
func newSpeaker(cfg Config, mediaRunner *media.Runner, tmpDir string) (providers.Speaker, error) {
	engines := make([]speechroute.Engine, len(cfg.TTSEngines))
	for i, name := range cfg.TTSEngines {
		s := newSpeechEngine(cfg, name, mediaRunner)
		engines[i] = speechroute.Engine{Name: name, Label: s.Label(), Speaker: s, Languages: s.Languages()}
	}
	if len(engines) == 1 {
		return engines[0].Speaker, nil
	}
	return speechroute.New(engines, mediaRunner, tmpDir), nil
}

// speechEngine is a text-to-speech engine that names the languages it speaks and itself
// (Label, as visitors read it).
type speechEngine interface {
	providers.Speaker
	providers.LanguageLister
	providers.Labeler
}

// newSpeechEngine builds one text-to-speech engine by its TTS_ENGINE name.
func newSpeechEngine(cfg Config, name string, mediaRunner *media.Runner) speechEngine {
	if name == "openai" {
		return openai.NewSpeaker(openai.Config{APIKey: cfg.OpenAITTS.Key, BaseURL: cfg.OpenAITTS.BaseURL,
			Model: cfg.OpenAITTSModel, Voices: cfg.OpenAITTSVoices, Languages: cfg.OpenAITTSLanguages,
			CallTimeout: cfg.OpenAITTSTimeout, Media: mediaRunner})
	}
	return espeak.New(espeak.Config{Media: mediaRunner})
}

// newTranscriber picks the speech-to-text engine named by STT_ENGINE.
func newTranscriber(cfg Config, runner *media.Runner, tmpDir string) providers.Transcriber {
	if cfg.STTEngine == "openai" {
		return openai.NewTranscriber(openai.TranscriberConfig{APIKey: cfg.OpenAISTT.Key, BaseURL: cfg.OpenAISTT.BaseURL,
			Model: cfg.OpenAISTTModel, Media: runner, TempDir: tmpDir})
	}
	return whisper.New(whisper.Config{Model: cfg.WhisperModel, Threads: cfg.WhisperThreads, Media: runner,
		VAD: cfg.WhisperVAD, VADModel: cfg.WhisperVADFile})
}

// newLinks reads video links: direct files through the address guard, and YouTube.
// countBytes hears every byte read from a link. Analyses of one link are kept a minute.
func newLinks(cfg Config, runner *media.Runner, countBytes func(int64)) (*links.Cached, *links.Guard) {
	guard := links.NewGuard(links.GuardConfig{AllowPrivate: cfg.AllowPrivateURLs, CountBytes: countBytes})
	// StreamClient: audio downloads may take longer than one request's timeout.
	youtube := links.NewYouTube(links.YouTubeConfig{HTTPClient: guard.StreamClient()})
	return links.NewCached(links.NewResolver(links.ResolverConfig{Guard: guard, Runner: runner,
		Sites: []links.Site{youtube}, MaxDuration: cfg.VTTMaxDuration})), guard
}

func newLogger(cfg Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// raiseFileLimit lifts the soft limit on open files to the hard one, so that the sockets,
// files and ffmpeg pipes of a busy server do not run out at a distribution's default of
// 1024. It returns the limits in force.
func raiseFileLimit() (soft, hard uint64, err error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, 0, err
	}
	if l.Cur < l.Max {
		want := l
		want.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			return l.Cur, l.Max, err
		}
		l = want
	}
	return l.Cur, l.Max, nil
}
