package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"parla/providers"
	"parla/providers/speechlang"
	"parla/providers/sqldb"
)

// Book is the order book, built once at boot. Its parts, each in its own file, tell an
// order's story: the Intake measures uploads and video links; the Desk takes orders and
// opens their checkouts; the Cashier binds payments to them and queues the one fulfilment
// job; the fulfiller (fulfil.go) runs that job through the service's Producer
// (produce_tts.go, produce_transcript.go), stores the result, links it and mails it, or
// refunds; the Results (results.go, results_edit.go) serve what a delivered order keeps; the sweeper
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
		tp.translator, _ = deps.Transcriber.(providers.TranslationChecker)
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
	translator, _ := deps.Transcriber.(providers.TranslationChecker)
	var languages *speechlang.Detector
	if l, ok := deps.Speaker.(providers.LanguageLister); ok {
		languages = speechlang.New(l.Languages())
	}
	var engineFor func() func(string) string
	if n, ok := deps.Speaker.(providers.EngineNamer); ok {
		engineFor = n.Namer
	}
	intake := &Intake{cfg: cfg, services: producers, uploads: uploads, audio: deps.Audio, links: deps.Links,
		observer: deps.Observer, log: deps.Log}
	return &Book{
		Desk: &Desk{cfg: cfg, orders: orders, uploads: uploads, services: producers, intake: intake,
			payments: deps.Payments, languages: languages, engineFor: engineFor,
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

// PageLink is the link page of a delivered order, the address its letter gives: a page
// that shows the file and its other formats, safe for a mail scanner to open (nothing
// downloads or changes on a GET).
func (b *Book) PageLink(o Order) string { return pageURL(b.cfg.PublicURL, o) }

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

// Sweep runs one sweep now (the queue runs it every SweepInterval).
func (b *Book) Sweep(ctx context.Context) (SweepReport, error) {
	return b.sweeper.Sweep(ctx)
}

// UnpaidUploadBytes is the bytes of unpaid uploads kept: what /readyz's disk check names
// when space is short, since the sweep frees those no checkout holds first.
func (b *Book) UnpaidUploadBytes(ctx context.Context) (int64, error) {
	total, _, err := b.Desk.uploads.usage(ctx, "")
	return total, err
}
