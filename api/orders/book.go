package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/speechlang"
	"parla/providers/sqldb"
	"parla/providers/transcript"
)

// Config tunes the order book. Zero values take the defaults given.
type Config struct {
	PublicURL   string        // absolute base for links and checkout return URLs
	LinkTTL     time.Duration // how long a download link works (DefaultLinkTTL)
	CheckoutTTL time.Duration // how long the hosted checkout accepts payment (DefaultCheckoutTTL)
	UnpaidTTL   time.Duration // when unpaid orders expire, text and address erased (CheckoutTTL + DefaultUnpaidGrace)
	TempDir     string        // scratch space for results being produced
	TempTTL     time.Duration // leftover scratch files older than this are swept (DefaultTempTTL)
	UploadDir   string        // accepted uploads, one file per upload id
	// SharedUploads keeps accepted uploads in the Storage (uploads/<id>) instead of
	// UploadDir, so that any node of a cluster can transcribe them.
	SharedUploads bool
	UploadTTL     time.Duration // unpaid uploads are swept after this (DefaultUploadTTL)
	// UploadQuotaPerClient and UploadQuotaTotal bound the bytes of unpaid uploads kept per
	// client address and in all (quota.go); 0 leaves a bound off.
	UploadQuotaPerClient, UploadQuotaTotal int64
	// LowDisk, when set, tells the sweep that free space is short (below /readyz's
	// READY_MIN_FREE_BYTES): it then deletes unpaid uploads no open checkout holds, whatever
	// their age, before the node is taken out of the balance.
	LowDisk func() bool
	// VTTMaxDuration is the longest video taken for transcription (DefaultVTTMaxDuration).
	VTTMaxDuration time.Duration
	// STTMaxDuration is the longest upload taken for transcription (DefaultSTTMaxDuration); measuring one
	// stops just past it.
	STTMaxDuration time.Duration
	TTS            TTSLimits
	Pricing        Pricing
	ImageURL       string // line-item image shown on the hosted checkout

	MaxAttempts  int           // fulfilment tries before a refund (DefaultMaxAttempts)
	RetryBase    time.Duration // first retry delay, doubled each time (DefaultRetryBase)
	PollInterval time.Duration // how often workers look for jobs (DefaultPollInterval)
	JobTimeout   time.Duration // longest a single fulfilment may run (DefaultJobTimeout)
	// RescueAfter is how long a job may stay running before another node takes it over: its
	// node died (DefaultRescueAfter). Never less than JobTimeout.
	RescueAfter time.Duration
	// NodeID names this process in River's table (attempted_by) and in the nodes'
	// heartbeats; "" makes one from the host name and a random suffix.
	NodeID string
	// HeartbeatEvery is how often a node of a cluster beats, NodeDeadAfter how long one
	// may go unseen before another takes its jobs (nodes.go; DefaultHeartbeatEvery,
	// DefaultNodeDeadAfter). The fault suite makes them short.
	HeartbeatEvery time.Duration
	NodeDeadAfter  time.Duration
	SweepInterval  time.Duration // how often the sweeper runs (DefaultSweepInterval)
	Workers        int           // concurrent fulfilments (DefaultWorkers)
	Now            func() time.Time
	// Checkpoint, when set, is called after each fulfilment step ("producing", "stored",
	// "sent", "mailed", "finished"): crash tests stop the process there. Nil in the product.
	Checkpoint func(orderID, step string)
}

// The defaults of Config's zero fields. The server's configuration (the root's config.go)
// reads the environment over these same constants, so each default is written once.
const (
	DefaultLinkTTL     = 10 * 24 * time.Hour
	DefaultCheckoutTTL = 30 * time.Minute
	// DefaultUnpaidGrace: how long after its checkout lapses an unpaid order is kept.
	DefaultUnpaidGrace    = 90 * time.Minute
	DefaultTempTTL        = 6 * time.Hour
	DefaultUploadTTL      = 24 * time.Hour
	DefaultVTTMaxDuration = 3 * time.Hour
	DefaultSTTMaxDuration = 3 * time.Hour
	DefaultRetryBase      = 5 * time.Second
	DefaultPollInterval   = 100 * time.Millisecond
	// DefaultJobTimeout is long enough for a long video transcribed on a CPU.
	DefaultJobTimeout    = 2 * time.Hour
	DefaultSweepInterval = 10 * time.Minute
	DefaultMaxAttempts   = 5
	DefaultWorkers       = 2
	// Unpaid uploads kept (bytes): per client address (four of the largest uploads) and in all.
	DefaultUploadQuotaPerClient = 100 << 20
	DefaultUploadQuotaTotal     = 2 << 30
)

// DefaultRescueAfter is RescueAfter's default for a job timeout: a minute past it, so that
// a job still running on a live node is never taken over.
func DefaultRescueAfter(jobTimeout time.Duration) time.Duration {
	return jobTimeout + time.Minute
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.LinkTTL, DefaultLinkTTL)
	def(&c.CheckoutTTL, DefaultCheckoutTTL)
	// An unpaid order's text (up to 100,000 characters) costs its sender nothing: it is
	// erased soon after its checkout lapses, the grace leaving time for a payment's late
	// notification (one arriving after is refunded, payment_late), and never before.
	def(&c.UnpaidTTL, c.CheckoutTTL+DefaultUnpaidGrace)
	c.UnpaidTTL = max(c.UnpaidTTL, c.CheckoutTTL)
	def(&c.TempTTL, DefaultTempTTL)
	def(&c.UploadTTL, DefaultUploadTTL)
	def(&c.VTTMaxDuration, DefaultVTTMaxDuration)
	def(&c.STTMaxDuration, DefaultSTTMaxDuration)
	def(&c.RetryBase, DefaultRetryBase)
	def(&c.PollInterval, DefaultPollInterval)
	def(&c.JobTimeout, DefaultJobTimeout)
	def(&c.RescueAfter, DefaultRescueAfter(c.JobTimeout))
	c.RescueAfter = max(c.RescueAfter, c.JobTimeout)
	if c.NodeID == "" {
		host, _ := os.Hostname()
		c.NodeID = nodeName(host) + "-" + randomString(6)
	}
	def(&c.SweepInterval, DefaultSweepInterval)
	def(&c.HeartbeatEvery, DefaultHeartbeatEvery)
	def(&c.NodeDeadAfter, DefaultNodeDeadAfter)
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Checkpoint == nil {
		c.Checkpoint = func(string, string) {}
	}
	if c.Pricing.Rules == nil {
		c.Pricing = DefaultPricing()
	}
}

// Deps are the outside parts the order book drives.
type Deps struct {
	DB       *sqldb.DB
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
	// Observer hears of orders' state changes (metrics); nil: nobody.
	Observer Observer
	Log      *slog.Logger
}

// languageLister is a speech engine that names the languages it speaks (codes as
// speechlang.Normalize gives them). An engine that names none speaks its default.
type languageLister interface {
	Languages() []string
}

// translationChecker is a transcription engine that can tell, before an order is taken,
// whether it can translate speech into English (whisper cannot with an English-only model).
// An engine without this check is taken to translate.
type translationChecker interface {
	Translates() error
}

// Book is the order book, built once at boot. Its parts, each in its own file, tell an
// order's story: the Intake measures uploads and video links; the Desk takes orders and
// opens their checkouts; the Cashier binds payments to them and queues the one fulfilment
// job; the fulfiller (fulfil.go) runs that job through the service's Producer
// (produce_tts.go, produce_transcript.go), stores the result, links it and mails it, or
// refunds; the Results (kept.go, edited.go) serve what a delivered order keeps; the sweeper
// (sweep.go) removes what lapsed.
type Book struct {
	// Desk quotes, validates and takes orders.
	Desk *Desk
	// Intake measures, keeps and prices uploads and video links before they are ordered.
	Intake *Intake
	// Cashier looks up checkout sessions and acts on payment events.
	Cashier *Cashier
	// Results is what a delivered order keeps for its link's life: other formats, the
	// visitor's edit, "delete now".
	Results *Results

	cfg     Config
	log     *slog.Logger
	orders  *Store
	queue   *jobQueue
	sweeper *sweeper
	storage providers.Storage
	// stopBeat ends the node's heartbeat (Postgres); nil before Start or on SQLite.
	stopBeat func()
	db       *sqldb.DB
	fulfil   *fulfiller // for the operator's actions (operator.go)
}

// New migrates the database (orders and River's tables) and builds the book with its
// workers. Call Start to begin working jobs.
func New(ctx context.Context, cfg Config, deps Deps) (*Book, error) {
	cfg.defaults()
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.Observer == nil {
		deps.Observer = noObserver{}
	}
	if err := migrate(ctx, deps.DB); err != nil {
		return nil, err
	}
	orders := &Store{db: deps.DB}
	var files uploadFiles = diskUploads{dir: cfg.UploadDir}
	if cfg.SharedUploads {
		files = storedUploads{storage: deps.Storage, tempDir: cfg.TempDir}
	}
	uploads := &Uploads{files: files, tempDir: cfg.TempDir, db: deps.DB, now: cfg.Now, log: deps.Log,
		quota: uploadQuota{perClient: cfg.UploadQuotaPerClient, total: cfg.UploadQuotaTotal}}
	producers := map[Service]Producer{}
	if deps.Speaker != nil {
		producers[TTS] = ttsProducer{speaker: deps.Speaker}
	}
	if deps.Transcriber != nil && deps.Audio != nil {
		tp := &transcriptProducer{engine: deps.Transcriber, audio: deps.Audio, links: deps.Links,
			uploads: uploads, tempDir: cfg.TempDir}
		tp.translator, _ = deps.Transcriber.(translationChecker)
		if cfg.UploadDir != "" || cfg.SharedUploads {
			producers[STT] = tp
		}
		if deps.Links != nil {
			producers[VTT] = tp
		}
	}
	f := &fulfiller{cfg: cfg, orders: orders, jobs: &jobRows{db: deps.DB, node: cfg.NodeID}, producers: producers,
		storage: deps.Storage, payments: deps.Payments, mailer: deps.Mailer, letters: deps.Letters,
		observer: deps.Observer, log: deps.Log}
	f.prober, _ = deps.Audio.(prober)
	sw := &sweeper{cfg: cfg, orders: orders, events: &eventRows{db: deps.DB}, uploads: uploads,
		storage: deps.Storage, log: deps.Log}
	queue, err := newJobQueue(ctx, cfg, deps.DB, f, sw, deps.Log)
	if err != nil {
		return nil, err
	}
	f.queue = queue
	sw.queue, sw.fulfiller = queue, f
	queue.nodes.every, queue.nodes.deadAfter = cfg.HeartbeatEvery, cfg.NodeDeadAfter
	if deps.DB.Dialect == sqldb.Postgres {
		l := &lease{valid: leaseFor(cfg.HeartbeatEvery, cfg.NodeDeadAfter)}
		f.lease, queue.nodes.lease = l, l
	}
	translator, _ := deps.Transcriber.(translationChecker)
	var languages *speechlang.Detector
	if l, ok := deps.Speaker.(languageLister); ok {
		languages = speechlang.New(l.Languages())
	}
	intake := &Intake{cfg: cfg, services: producers, uploads: uploads, audio: deps.Audio, links: deps.Links,
		observer: deps.Observer, log: deps.Log}
	return &Book{
		Desk: &Desk{cfg: cfg, orders: orders, uploads: uploads, services: producers, intake: intake,
			payments: deps.Payments, languages: languages,
			translator: translator, observer: deps.Observer, log: deps.Log},
		Intake:  intake,
		Results: &Results{storage: deps.Storage, orders: orders, log: deps.Log},
		Cashier: &Cashier{cfg: cfg, orders: orders, uploads: uploads, events: &eventRows{db: deps.DB},
			payments: deps.Payments, queue: queue, observer: deps.Observer, log: deps.Log},
		cfg: cfg, log: deps.Log, orders: orders, queue: queue, sweeper: sw, storage: deps.Storage, db: deps.DB, fulfil: f,
	}, nil
}

// Config returns the book's effective configuration.
func (b *Book) Config() Config { return b.cfg }

// Start begins working jobs in the background until Stop.
func (b *Book) Start(ctx context.Context) error {
	if b.queue.db.Dialect == sqldb.Postgres {
		// Seen alive before taking any job, so that no other node judges this one's
		// first jobs orphans.
		if err := b.queue.nodes.beat(ctx); err != nil {
			return err
		}
		hbCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); b.queue.nodes.heartbeat(hbCtx, b.log) }()
		b.stopBeat = func() { cancel(); <-done }
	}
	if err := b.queue.client.Start(ctx); err != nil {
		if b.stopBeat != nil {
			b.stopBeat()
			b.stopBeat = nil
		}
		return fmt.Errorf("starting job queue: %w", err)
	}
	return nil
}

// Stop lets running jobs finish until ctx ends, then cancels them; cancelled jobs go
// back to the queue and run again at the next start.
func (b *Book) Stop(ctx context.Context) error {
	if b.stopBeat != nil {
		defer b.stopBeat()
	}
	err := b.queue.client.Stop(ctx)
	if err == nil {
		return nil
	}
	cancelCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err2 := b.queue.client.StopAndCancel(cancelCtx); err2 != nil {
		return fmt.Errorf("stopping job queue: %w", errors.Join(err, err2))
	}
	return nil
}

// Link is the public download URL of a delivered order.
func (b *Book) Link(o Order) string { return linkURL(b.cfg.PublicURL, o) }

func linkURL(publicURL string, o Order) string {
	if o.LinkToken == "" {
		return ""
	}
	return publicURL + "/d/" + o.LinkToken
}

// PageLink is the link page of a delivered order, the address its letter gives: a page
// that shows the file and its other formats, safe for a mail scanner to open (nothing
// downloads or changes on a GET).
func (b *Book) PageLink(o Order) string { return pageURL(b.cfg.PublicURL, o) }

func pageURL(publicURL string, o Order) string {
	if o.LinkToken == "" {
		return ""
	}
	return publicURL + "/r/" + o.LinkToken
}

// ErrLinkExpired is returned by Download for a link past its 10 days or a swept result.
var ErrLinkExpired = errors.New("download link expired")

// Download resolves a download token to its delivered order, refusing lapsed links.
func (b *Book) Download(ctx context.Context, token string) (Order, error) {
	o, err := b.orders.ByLinkToken(ctx, token)
	if err != nil {
		return o, err
	}
	if o.ResultKey == "" || !b.cfg.Now().Before(o.LinkExpiresAt) {
		return o, ErrLinkExpired
	}
	return o, nil
}

// ContentType is the MIME type of a result file, judged by its extension.
func ContentType(name string) string {
	ext := strings.TrimPrefix(filepath.Ext(name), ".")
	for _, f := range providers.SpeechFormats {
		if info, ok := media.Format(f); ok && info.Ext == ext {
			return info.ContentType
		}
	}
	for _, f := range providers.TranscriptFormats {
		if e, contentType, ok := transcript.Info(f); ok && e == "."+ext {
			return contentType
		}
	}
	return "application/octet-stream"
}
