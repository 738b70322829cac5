package orders

import (
	"os"
	"parla/api/orders/jobs"
	"time"
)

// Config tunes the order book. Zero values take the defaults given.
type Config struct {
	PublicURL   string        // absolute base for links and checkout return URLs
	Routes      Routes        // the site's addresses under PublicURL (api.OrderRoutes)
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
	// Preview sets the free transcription previews (preview_transcript.go); its zero
	// value turns them off.
	Preview  PreviewConfig
	Pricing  Pricing
	ImageURL string // line-item image shown on the hosted checkout

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
	// may go unseen before another takes its jobs (jobs/nodes.go; jobs.DefaultHeartbeatEvery,
	// jobs.DefaultNodeDeadAfter). The fault suite makes them short.
	HeartbeatEvery time.Duration
	NodeDeadAfter  time.Duration
	SweepInterval  time.Duration // how often the sweeper runs (DefaultSweepInterval)
	// ReconcileInterval is how often the reconciler runs (reconcile.go;
	// DefaultReconcileInterval), and how long a paid order may wait for its job's insert.
	ReconcileInterval time.Duration
	// Reconcilers are the app's steps of the reconciler, run after the book's own.
	Reconcilers []Reconciler
	Workers     int // concurrent fulfilments (DefaultWorkers)
	Now         func() time.Time
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
	// DefaultReconcileInterval bounds how long a row past its bound waits for its exit.
	DefaultReconcileInterval = 30 * time.Second
	DefaultMaxAttempts       = 5
	DefaultWorkers           = 2
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
		c.NodeID = jobs.NodeName(host) + "-" + randomString(6)
	}
	def(&c.SweepInterval, DefaultSweepInterval)
	def(&c.ReconcileInterval, DefaultReconcileInterval)
	def(&c.HeartbeatEvery, jobs.DefaultHeartbeatEvery)
	def(&c.NodeDeadAfter, jobs.DefaultNodeDeadAfter)
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

// queue is the job queue's part of the configuration, defaults applied.
func (c Config) queue() jobs.Config {
	return jobs.Config{NodeID: c.NodeID, Workers: c.Workers, MaxAttempts: c.MaxAttempts, RetryBase: c.RetryBase,
		PollInterval: c.PollInterval, JobTimeout: c.JobTimeout, RescueAfter: c.RescueAfter,
		SweepInterval: c.SweepInterval, ReconcileInterval: c.ReconcileInterval, HeartbeatEvery: c.HeartbeatEvery, NodeDeadAfter: c.NodeDeadAfter}
}
