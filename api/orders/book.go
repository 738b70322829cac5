package orders

import (
	"context"
	"log/slog"

	"parla/api/orders/jobs"
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
	// Previews transcribes the first seconds of an upload or a link before payment.
	Previews *Previews

	cfg     Config
	log     *slog.Logger
	orders  *Store
	queue   *jobs.Queue
	sweeper *sweeper
	rec     *reconciler
	storage providers.Storage
	db      *sqldb.DB
	fulfil  *fulfiller // for the operator's actions (operator.go)
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
	if deps.Turns == nil {
		deps.Turns = NewEngineTurns()
	}
	if deps.Speaker != nil {
		producers[TTS] = ttsProducer{speaker: deps.Speaker}
	}
	if deps.Transcriber != nil && deps.Audio != nil {
		tp := &transcriptProducer{engine: deps.Turns.Paid(deps.Transcriber), audio: deps.Audio, links: deps.Links,
			uploads: uploads, tempDir: cfg.TempDir}
		tp.translator, _ = deps.Transcriber.(providers.TranslationChecker)
		if cfg.UploadDir != "" || cfg.SharedUploads {
			producers[STT] = tp
		}
		if deps.Links != nil {
			producers[VTT] = tp
		}
	}
	erasure := &erasure{db: deps.DB, storage: deps.Storage}
	f := &fulfiller{cfg: cfg, orders: orders, fence: &fence{db: deps.DB, node: cfg.NodeID}, erasure: erasure,
		producers: producers, storage: deps.Storage, payments: deps.Payments, mailer: deps.Mailer,
		letters: deps.Letters, observer: deps.Observer, log: deps.Log}
	f.prober, _ = deps.Audio.(prober)
	sw := &sweeper{cfg: cfg, orders: orders, events: &eventRows{db: deps.DB}, uploads: uploads,
		storage: deps.Storage, erasure: erasure, log: deps.Log}
	rec := &reconciler{cfg: cfg, fulfiller: f, observer: deps.Observer, log: deps.Log}
	queue, err := jobs.New(ctx, cfg.queue(), deps.DB, f.handlers(sw, rec), deps.Log)
	if err != nil {
		return nil, err
	}
	f.queue, rec.queue = queue, queue
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
			payments: deps.Payments, Readers: &Readers{languages: languages, engineFor: engineFor},
			translator: translator, observer: deps.Observer, log: deps.Log},
		Intake:   intake,
		Results:  &Results{storage: deps.Storage, orders: orders, erasure: erasure, log: deps.Log},
		Previews: newPreviews(cfg, deps, intake),
		Cashier: &Cashier{cfg: cfg, orders: orders, uploads: uploads, events: &eventRows{db: deps.DB},
			payments: deps.Payments, queue: queue, observer: deps.Observer, log: deps.Log},
		cfg: cfg, log: deps.Log, orders: orders, queue: queue, sweeper: sw, rec: rec, storage: deps.Storage, db: deps.DB, fulfil: f,
	}, nil
}

// newPreviews builds the transcription previews over the raw engine (the paid work's is
// deps.Turns.Paid of it); without a transcriber, or media that cuts clips, they are off.
func newPreviews(cfg Config, deps Deps, intake *Intake) *Previews {
	p := &Previews{cfg: cfg.Preview, engine: deps.Transcriber, turns: deps.Turns,
		budget: &previewBudget{perHour: cfg.Preview.PerHour, now: cfg.Now}, intake: intake,
		tempDir: cfg.TempDir, log: deps.Log, now: cfg.Now, answers: map[string]*previewAnswer{}}
	p.base, p.cancel = context.WithCancel(context.Background())
	p.clips, _ = deps.Audio.(clipMaker)
	p.links, _ = deps.Links.(linkClipMaker)
	return p
}

// handlers are what the queue runs for each job: the fulfilment, giving an order up
// (fenced by the claim its run failed with), the refund, the sweep, the reconciler.
func (f *fulfiller) handlers(sw *sweeper, rec *reconciler) jobs.Handlers {
	return jobs.Handlers{
		Fulfil: f.fulfil,
		GiveUp: func(ctx context.Context, id string, cause error) error {
			return f.giveUp(ctx, id, claimOf(cause), cause)
		},
		Refund: f.refund,
		Sweep: func(ctx context.Context) error {
			_, err := sw.Sweep(ctx)
			return err
		},
		Reconcile: func(ctx context.Context) error {
			_, err := rec.reconcile(ctx)
			return err
		},
	}
}

// Config returns the book's effective configuration.
func (b *Book) Config() Config { return b.cfg }

// Start begins working jobs in the background until Stop.
func (b *Book) Start(ctx context.Context) error { return b.queue.Start(ctx) }

// Stop ends the previews being made, lets running jobs finish until ctx ends, then
// cancels them; cancelled jobs go back to the queue and run again at the next start.
func (b *Book) Stop(ctx context.Context) error {
	b.Previews.stop()
	return b.queue.Stop(ctx)
}

// QueuePosition tells a paid order still waiting for a worker its place in the queue: 1
// when it is next, 0 when it is not waiting (being produced, done, or not paid).
func (b *Book) QueuePosition(ctx context.Context, o Order) (int, error) {
	if o.Status != Paid {
		return 0, nil
	}
	return b.queue.Position(ctx, o.ID)
}

// Link is the public download URL of a delivered order.
func (b *Book) Link(o Order) string { return link(b.cfg.PublicURL, b.cfg.Routes.Download, o) }

// PageLink is the link page of a delivered order, the address its letter gives: a page
// that shows the file and its other formats, safe for a mail scanner to open (nothing
// downloads or changes on a GET).
func (b *Book) PageLink(o Order) string { return link(b.cfg.PublicURL, b.cfg.Routes.Page, o) }

// Download resolves a download token to its delivered order, refusing lapsed links.
func (b *Book) Download(ctx context.Context, token string) (Order, error) {
	o, err := b.orders.ByLinkToken(ctx, token)
	if err != nil {
		return o, err
	}
	if o.ResultKey == "" || !b.cfg.Now().Before(o.LinkExpiresAt) {
		return o, ErrLinkExpired
	}
	if o.Status == Refunded && o.DoneAt.IsZero() {
		return o, ErrLinkExpired // refunded before it was delivered: no link was promised
	}
	return o, nil
}

// Sweep runs one sweep now (the queue runs it every SweepInterval).
func (b *Book) Sweep(ctx context.Context) (SweepReport, error) {
	return b.sweeper.Sweep(ctx)
}

// Reconcile runs the reconciler once now (the queue runs it every ReconcileInterval) and
// says how many rows each step moved.
func (b *Book) Reconcile(ctx context.Context) (map[string]int, error) {
	return b.rec.reconcile(ctx)
}

// Holder is this process's identity in the cluster (jobs.Queue.Holder), for what the app
// holds on its behalf (an API call's hold).
func (b *Book) Holder() string { return b.queue.Holder() }

// LiveHolders are the identities of the live processes (jobs.Queue.LiveHolders): what a
// holder not listed holds is a dead process's, for a reconciler step to release.
func (b *Book) LiveHolders(ctx context.Context) ([]string, error) { return b.queue.LiveHolders(ctx) }

// UnpaidUploadBytes is the bytes of unpaid uploads kept: what /readyz's disk check names
// when space is short, since the sweep frees those no checkout holds first.
func (b *Book) UnpaidUploadBytes(ctx context.Context) (int64, error) {
	total, _, err := b.Desk.uploads.usage(ctx, "")
	return total, err
}
