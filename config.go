package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"parla/api"
	"parla/api/orders"
	"parla/api/orders/jobs"
	"parla/providers/mail"
	"parla/providers/openai"
	"parla/providers/sqldb"
	"parla/providers/whisper"
)

// Config is everything read from the environment at boot. Each field documents its
// variable; README.md has the same table.
type Config struct {
	Addr      string // ADDR: listen address (default :8080)
	DataDir   string // DATA_DIR: all local state (default ./data)
	PublicURL string // PUBLIC_URL: how visitors reach us (default http://localhost:<port>)

	// TTS_ENGINE: espeak (default), openai, or a list of both in order of preference
	// (openai,espeak: each paragraph to the first that speaks its language). TTSEngine is
	// the list as the logs and metrics name it.
	TTSEngine  string
	TTSEngines []string
	// The OpenAI-compatible server of each service and its key: OPENAI_TTS_BASE_URL and
	// OPENAI_TTS_API_KEY, OPENAI_STT_BASE_URL and OPENAI_STT_API_KEY, each falling back to
	// OPENAI_BASE_URL (default OpenAI's) and OPENAI_API_KEY. A key is needed for OpenAI's
	// own API only; without one (unset, or "none"), calls carry no Authorization header.
	OpenAITTS, OpenAISTT openAIServer
	OpenAITTSModel       string // OPENAI_TTS_MODEL (default tts-1)
	// OPENAI_TTS_VOICES over the model's shipped voice map (kokoro): the server's voice for
	// each product voice, per language (providers/openai/voices.go has the format).
	OpenAITTSVoices openai.VoiceMap
	// OPENAI_TTS_LANGUAGES: the languages the speech server speaks, comma-separated codes
	// (default: the voice map's, else OpenAI's list).
	OpenAITTSLanguages []string
	OpenAITTSTimeout   time.Duration // OPENAI_TTS_CALL_TIMEOUT: longest one speech call may take (default 5m)

	STTEngine      string        // STT_ENGINE: whisper (default) or openai
	OpenAISTTModel string        // OPENAI_STT_MODEL (default whisper-1)
	WhisperModel   string        // WHISPER_MODEL: ggml model file (default models/ggml-base.bin)
	WhisperThreads int           // WHISPER_THREADS (default: the number of CPUs)
	WhisperVAD     string        // WHISPER_VAD: how speech is found first: auto (default), silero, silence or off
	WhisperVADFile string        // WHISPER_VAD_MODEL: Silero VAD model (default models/ggml-silero-v6.2.0.bin)
	MaxUploadBytes int64         // UPLOAD_MAX_BYTES: largest audio upload (default 25 MB)
	UploadTTL      time.Duration // UPLOAD_TTL: unpaid uploads are deleted after this (default 24h)
	VTTMaxDuration time.Duration // VTT_MAX_DURATION: longest video taken (default 3h)
	STTMaxDuration time.Duration // STT_MAX_DURATION: longest upload taken (default 3h)
	// The free preview of a recording's first seconds before payment: PREVIEW_SECONDS
	// (default 30, 0 = off), PREVIEW_SECONDS_PER_HOUR of audio per client address, IPv6 per
	// /64 (default 300, 0 = no bound), PREVIEW_ENGINES: all (default), whisper (only with the
	// self-hosted engine: an OpenAI-compatible one costs the operator money) or off.
	PreviewSeconds, PreviewSecondsPerHour int64
	PreviewEngines                        string
	// ALLOW_PRIVATE_URLS=1 lets video links reach loopback and private addresses: for local
	// development and tests only.
	AllowPrivateURLs bool
	// Unpaid uploads kept, in bytes (0 = no bound): UPLOAD_QUOTA_PER_CLIENT per client
	// address, IPv6 per /64 (default 100 MiB), UPLOAD_QUOTA_TOTAL in all (default 2 GiB).
	UploadQuotaPerClient, UploadQuotaTotal int64

	StripeSecretKey      string // STRIPE_SECRET_KEY: unset = built-in test checkout
	StripeWebhookSecret  string // STRIPE_WEBHOOK_SECRET
	StripePublishableKey string // STRIPE_PUBLISHABLE_KEY: for Stripe.js in the browser
	StripeAPIBase        string // STRIPE_API_BASE: replaces api.stripe.com (stripe-mock)
	AllowTestCheckout    bool   // ALLOW_TEST_CHECKOUT=1: test checkout even on a public https URL

	SMTPURL      string // SMTP_URL: smtp[s]://user:pass@host:port; unset = DATA_DIR/outbox
	MailFrom     string // MAIL_FROM: fixed sender (default "Parla <no-reply@localhost>")
	ContactEmail string // CONTACT_EMAIL: the footer's contact link (default contact@<public host>)

	Storage             string // STORAGE: disk (default) or minio
	MinIOEndpoint       string // MINIO_ENDPOINT: host:port
	MinIOAccessKey      string // MINIO_ACCESS_KEY
	MinIOSecretKey      string // MINIO_SECRET_KEY
	MinIOBucket         string // MINIO_BUCKET (default parla)
	MinIOUseSSL         bool   // MINIO_USE_SSL
	MinIORegion         string // MINIO_REGION
	MinIOPublicEndpoint string // MINIO_PUBLIC_ENDPOINT: host browsers use for presigned links

	// DATABASE_URL: postgres://… puts orders and River's queue in PostgreSQL, shared by any
	// number of nodes; unset = SQLite in DATA_DIR (one node).
	DatabaseURL string
	DBMaxConns  int // DB_MAX_CONNS: connections to Postgres per node (default 20)
	// NODE_HEARTBEAT, NODE_DEAD_AFTER: how often a node of a cluster beats (default 2s), and
	// how long one may go unseen before others take its jobs over (default 10s).
	HeartbeatEvery time.Duration
	NodeDeadAfter  time.Duration
	RescueAfter    time.Duration // JOB_RESCUE_AFTER: a job running this long is taken over by another node (default JOB_TIMEOUT+1m)
	NodeID         string        // NODE_ID: this node's name in River's table (default host name + random suffix)

	Pricing        orders.Pricing // PRICING: JSON price list over the defaults
	TTSMaxChars    int64          // TTS_MAX_CHARS (default 100000)
	Workers        int            // WORKERS: concurrent fulfilments (default 2)
	MaxAttempts    int            // FULFIL_MAX_ATTEMPTS (default 5)
	RetryBase      time.Duration  // FULFIL_RETRY_BASE (default 5s)
	JobTimeout     time.Duration  // JOB_TIMEOUT: longest one fulfilment may run (default 2h)
	SweepInterval  time.Duration  // SWEEP_INTERVAL (default 10m)
	RateLimit      int            // RATE_LIMIT: checkouts per client per minute (default 30, 0 = off)
	TrustedProxies []string       // TRUSTED_PROXIES: comma-separated IPs/CIDRs
	ShutdownGrace  time.Duration  // SHUTDOWN_TIMEOUT: how long running jobs may finish (default 30s)
	LogLevel       slog.Level     // LOG_LEVEL: debug, info (default), warn, error
	LogFormat      string         // LOG_FORMAT: text (default) or json

	ReconcileInterval time.Duration // RECONCILE_INTERVAL: how often rows past their bound are moved (default 30s)

	// The API's and its credit's settings (config_api.go).
	APISettings

	// Metrics and health (README "Metrics and health").
	MetricsAddr  string // METRICS_ADDR: serve /metrics here, without a token, instead of on ADDR
	ReadyMinFree int64  // READY_MIN_FREE_BYTES: /readyz fails below this much free in DATA_DIR (default 512 MiB)
	// STTRequired: STT_ENGINE is set, so an unavailable speech-to-text engine makes the node
	// unready; unset, audio- and video-to-text are closed by configuration.
	STTRequired       bool
	AdminPasswordHash string // ADMIN_PASSWORD_HASH: bcrypt hash (parla hash-password) opening /admin
	AdminToken        string // ADMIN_TOKEN: bearer token (≥ 32 characters) for scripts, /admin and /metrics on ADDR
	AdminSessionKey   string // ADMIN_SESSION_KEY: optional (≥ 32 characters), mixed into the admin session key

	// checkpoint is no setting: tests set it to crash the process at a fulfilment step.
	checkpoint func(orderID, step string)
}

// The address the server listens on when ADDR is unset; `parla healthcheck` asks there too,
// and PUBLIC_URL's default names its port.
const (
	defaultPort = "8080"
	defaultAddr = ":" + defaultPort
)

// loadConfig reads and validates the configuration; the error lists every problem.
func loadConfig(getenv func(string) string) (Config, error) {
	env := &envReader{getenv: getenv}
	c := env.read()
	return c, errors.Join(append(env.errs, c.problems()...)...)
}

// envReader reads settings from the environment, each with its default, and notes every
// value of the wrong form (its default stands in, so that one boot lists every problem).
type envReader struct {
	getenv func(string) string
	errs   []error
}

// read turns the environment into a Config: every variable or its default, and the
// defaults that follow from other settings (PUBLIC_URL from ADDR, CONTACT_EMAIL from
// PUBLIC_URL, JOB_RESCUE_AFTER from JOB_TIMEOUT). How settings agree is checked after
// (Config.problems).
func (r *envReader) read() Config {
	var c Config
	r.readSite(&c)
	r.readEngines(&c)
	r.readPayments(&c)
	r.readMail(&c)
	r.readStorage(&c)
	r.readDatabase(&c)
	r.readLimits(&c)
	r.readOps(&c)
	r.readAPI(&c.APISettings)
	return c
}

// readSite reads where the site listens, where it keeps its state and how visitors reach it.
func (r *envReader) readSite(c *Config) {
	c.Addr = r.get("ADDR", defaultAddr)
	c.DataDir = r.get("DATA_DIR", "./data")
	if abs, err := filepath.Abs(c.DataDir); err == nil {
		c.DataDir = abs
	}
	c.PublicURL = strings.TrimRight(r.get("PUBLIC_URL", "http://localhost:"+addrPort(c.Addr)), "/")
	c.ContactEmail = r.get("CONTACT_EMAIL", "")
	if u, err := url.Parse(c.PublicURL); c.ContactEmail == "" && err == nil {
		c.ContactEmail = defaultContact(u.Hostname())
	}
	c.RateLimit = int(r.integer("RATE_LIMIT", 30, 0))
	c.TrustedProxies = r.readProxies()
}

// readEngines reads which engines speak and transcribe, and their settings.
func (r *envReader) readEngines(c *Config) {
	c.TTSEngines = r.engineList("TTS_ENGINE", "espeak", "espeak", "openai")
	c.TTSEngine = strings.Join(c.TTSEngines, ",")
	c.OpenAITTS = r.openAIServer("OPENAI_TTS_BASE_URL", "OPENAI_TTS_API_KEY")
	c.OpenAISTT = r.openAIServer("OPENAI_STT_BASE_URL", "OPENAI_STT_API_KEY")
	c.OpenAITTSModel = r.get("OPENAI_TTS_MODEL", openai.DefaultSpeechModel)
	c.OpenAITTSVoices = r.voices(c.OpenAITTSModel)
	c.OpenAITTSTimeout = r.duration("OPENAI_TTS_CALL_TIMEOUT", openai.DefaultCallTimeout)
	var err error
	if c.OpenAITTSLanguages, err = openai.ParseLanguages(r.get("OPENAI_TTS_LANGUAGES", ""), c.OpenAITTSVoices); err != nil {
		r.fail(fmt.Errorf("OPENAI_TTS_LANGUAGES: %w", err))
	}
	c.STTEngine = r.oneOf("STT_ENGINE", "whisper", "whisper", "openai")
	c.STTRequired = r.get("STT_ENGINE", "") != ""
	c.OpenAISTTModel = r.get("OPENAI_STT_MODEL", openai.DefaultTranscriptionModel)
	c.WhisperModel = r.get("WHISPER_MODEL", "models/ggml-base.bin")
	c.WhisperThreads = int(r.integer("WHISPER_THREADS", int64(runtime.NumCPU()), 1))
	c.WhisperVAD = r.oneOf("WHISPER_VAD", whisper.VADModes[0], whisper.VADModes...)
	c.WhisperVADFile = r.get("WHISPER_VAD_MODEL", "models/ggml-silero-v6.2.0.bin")
	c.AllowPrivateURLs = r.boolean("ALLOW_PRIVATE_URLS")
}

// readPayments reads the Stripe keys, the test checkout's permission and the prices.
func (r *envReader) readPayments(c *Config) {
	c.StripeSecretKey = r.get("STRIPE_SECRET_KEY", "")
	c.StripeWebhookSecret = r.get("STRIPE_WEBHOOK_SECRET", "")
	c.StripePublishableKey = r.get("STRIPE_PUBLISHABLE_KEY", "")
	c.StripeAPIBase = r.get("STRIPE_API_BASE", "")
	c.AllowTestCheckout = r.boolean("ALLOW_TEST_CHECKOUT")
	var err error
	if c.Pricing, err = orders.ParsePricing(r.get("PRICING", "")); err != nil {
		r.fail(fmt.Errorf("PRICING: %w", err))
	}
}

// readMail reads how letters leave.
func (r *envReader) readMail(c *Config) {
	c.SMTPURL = r.get("SMTP_URL", "")
	c.MailFrom = r.get("MAIL_FROM", mail.DefaultFrom)
}

// readStorage reads where uploads and results are kept.
func (r *envReader) readStorage(c *Config) {
	c.Storage = r.oneOf("STORAGE", "disk", "disk", "minio")
	c.MinIOEndpoint = r.get("MINIO_ENDPOINT", "")
	c.MinIOAccessKey = r.get("MINIO_ACCESS_KEY", "")
	c.MinIOSecretKey = r.get("MINIO_SECRET_KEY", "")
	c.MinIOBucket = r.get("MINIO_BUCKET", "parla")
	c.MinIOUseSSL = r.boolean("MINIO_USE_SSL")
	c.MinIORegion = r.get("MINIO_REGION", "")
	c.MinIOPublicEndpoint = r.get("MINIO_PUBLIC_ENDPOINT", "")
}

// readDatabase reads the shared database of a cluster, and this node's name in it.
func (r *envReader) readDatabase(c *Config) {
	c.DatabaseURL = r.get("DATABASE_URL", "")
	c.DBMaxConns = int(r.integer("DB_MAX_CONNS", sqldb.DefaultMaxConns, 2))
	c.NodeID = r.get("NODE_ID", "")
	c.HeartbeatEvery = r.duration("NODE_HEARTBEAT", jobs.DefaultHeartbeatEvery)
	c.NodeDeadAfter = r.duration("NODE_DEAD_AFTER", jobs.DefaultNodeDeadAfter)
}

// readLimits reads the sizes and times orders are held to, with the order book's and the
// HTTP layer's own defaults.
func (r *envReader) readLimits(c *Config) {
	c.MaxUploadBytes = r.integer("UPLOAD_MAX_BYTES", api.DefaultMaxUploadBytes, 1)
	c.UploadTTL = r.duration("UPLOAD_TTL", orders.DefaultUploadTTL)
	c.STTMaxDuration = r.duration("STT_MAX_DURATION", orders.DefaultSTTMaxDuration)
	c.UploadQuotaPerClient = r.integer("UPLOAD_QUOTA_PER_CLIENT", orders.DefaultUploadQuotaPerClient, 0)
	c.UploadQuotaTotal = r.integer("UPLOAD_QUOTA_TOTAL", orders.DefaultUploadQuotaTotal, 0)
	c.VTTMaxDuration = r.duration("VTT_MAX_DURATION", orders.DefaultVTTMaxDuration)
	c.PreviewSeconds = r.integer("PREVIEW_SECONDS", int64(orders.DefaultPreviewLength/time.Second), 0)
	c.PreviewSecondsPerHour = r.integer("PREVIEW_SECONDS_PER_HOUR", int64(orders.DefaultPreviewPerHour/time.Second), 0)
	c.PreviewEngines = r.oneOf("PREVIEW_ENGINES", "all", "all", "whisper", "off")
	c.TTSMaxChars = r.integer("TTS_MAX_CHARS", 100_000, 1)
	c.Workers = int(r.integer("WORKERS", orders.DefaultWorkers, 1))
	c.MaxAttempts = int(r.integer("FULFIL_MAX_ATTEMPTS", orders.DefaultMaxAttempts, 1))
	c.RetryBase = r.duration("FULFIL_RETRY_BASE", orders.DefaultRetryBase)
	c.JobTimeout = r.duration("JOB_TIMEOUT", orders.DefaultJobTimeout)
	c.RescueAfter = r.duration("JOB_RESCUE_AFTER", orders.DefaultRescueAfter(c.JobTimeout))
	c.SweepInterval = r.duration("SWEEP_INTERVAL", orders.DefaultSweepInterval)
	c.ReconcileInterval = r.duration("RECONCILE_INTERVAL", orders.DefaultReconcileInterval)
	c.ShutdownGrace = r.duration("SHUTDOWN_TIMEOUT", 30*time.Second)
}

// preview is the order book's PreviewConfig: off when PREVIEW_ENGINES leaves out this
// node's speech-to-text engine.
func (c Config) preview() orders.PreviewConfig {
	p := orders.PreviewConfig{Length: time.Duration(c.PreviewSeconds) * time.Second,
		PerHour: time.Duration(c.PreviewSecondsPerHour) * time.Second, Engine: c.STTEngine}
	if c.PreviewEngines == "off" || (c.PreviewEngines == "whisper" && c.STTEngine != "whisper") {
		p.Length = 0
	}
	return p
}

// readOps reads the logs, the metrics and health settings and the admin area's secrets.
func (r *envReader) readOps(c *Config) {
	if err := c.LogLevel.UnmarshalText([]byte(r.get("LOG_LEVEL", "info"))); err != nil {
		r.fail(fmt.Errorf("LOG_LEVEL: %w", err))
	}
	c.LogFormat = r.oneOf("LOG_FORMAT", "text", "text", "json")
	c.MetricsAddr = r.get("METRICS_ADDR", "")
	c.ReadyMinFree = r.integer("READY_MIN_FREE_BYTES", 512<<20, 0)
	c.AdminPasswordHash = r.get("ADMIN_PASSWORD_HASH", "")
	c.AdminToken = r.get("ADMIN_TOKEN", "")
	c.AdminSessionKey = r.get("ADMIN_SESSION_KEY", "")
}

// readProxies reads TRUSTED_PROXIES, a comma-separated list of IPs and CIDRs.
func (r *envReader) readProxies() []string {
	var proxies []string
	for _, p := range strings.Split(r.get("TRUSTED_PROXIES", ""), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if err := proxyError(p); err != nil {
			r.fail(err)
			continue
		}
		proxies = append(proxies, p)
	}
	return proxies
}

// proxyError refuses a trusted proxy that is no IP or CIDR, or a CIDR of every address:
// any client could then name its own address to the rate limits.
func proxyError(p string) error {
	if net.ParseIP(p) != nil {
		return nil
	}
	_, n, err := net.ParseCIDR(p)
	if err != nil {
		return fmt.Errorf("TRUSTED_PROXIES: %q is neither an IP nor a CIDR", p)
	}
	if ones, _ := n.Mask.Size(); ones == 0 {
		return fmt.Errorf("TRUSTED_PROXIES: %q trusts every address, so any client could choose its own address for the rate limits", p)
	}
	return nil
}

// fail notes a problem; loadConfig reports them all together.
func (r *envReader) fail(err error) { r.errs = append(r.errs, err) }

// get is name's value without surrounding spaces, or def when that is empty.
func (r *envReader) get(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

// oneOf is name's value in lower case, which must be one of allowed.
func (r *envReader) oneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(r.get(name, def))
	if slices.Contains(allowed, v) {
		return v
	}
	r.fail(fmt.Errorf("%s=%q: must be one of %s", name, v, strings.Join(allowed, ", ")))
	return def
}

// engineList is name's value as a comma-separated list, in order, of distinct engines
// among allowed (lower case).
func (r *envReader) engineList(name, def string, allowed ...string) []string {
	var list []string
	for _, e := range strings.Split(strings.ToLower(r.get(name, def)), ",") {
		e = strings.TrimSpace(e)
		switch {
		case !slices.Contains(allowed, e):
			r.fail(fmt.Errorf("%s: %q: each engine must be one of %s (a list in order of preference: openai,espeak)",
				name, e, strings.Join(allowed, ", ")))
		case slices.Contains(list, e):
			r.fail(fmt.Errorf("%s: %s is named twice", name, e))
		default:
			list = append(list, e)
		}
	}
	if len(list) == 0 {
		return []string{def}
	}
	return list
}

// integer is name's value as a whole number of at least lo.
func (r *envReader) integer(name string, def int64, lo int64) int64 {
	s := r.get(name, "")
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo {
		r.fail(fmt.Errorf("%s=%q: must be a whole number ≥ %d", name, s, lo))
		return def
	}
	return n
}

// duration is name's value as a positive duration.
func (r *envReader) duration(name string, def time.Duration) time.Duration {
	s := r.get(name, "")
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		r.fail(fmt.Errorf("%s=%q: must be a positive duration such as 30s or 10m", name, s))
		return def
	}
	return d
}

// boolean is name's value as a switch: 1, true or yes turn it on; unset, it is off.
func (r *envReader) boolean(name string) bool {
	switch strings.ToLower(r.get(name, "")) {
	case "", "0", "false", "no":
		return false
	case "1", "true", "yes":
		return true
	}
	r.fail(fmt.Errorf("%s: must be 1 or 0", name))
	return false
}

// addrPort is the port of a listen address, for PUBLIC_URL's default; a malformed ADDR
// (refused by addressErrors) gives the default port.
func addrPort(addr string) string {
	if _, port, err := net.SplitHostPort(addr); err == nil {
		return port
	}
	return defaultPort
}

// defaultContact is the footer's address when CONTACT_EMAIL is unset: contact@ the site's
// host name, or contact@localhost for an address such as 127.0.0.1 or [::1].
func defaultContact(host string) string {
	if net.ParseIP(host) != nil {
		return "contact@localhost"
	}
	return "contact@" + host
}

// PaymentMode says which checkout the visitor sees.
func (c Config) PaymentMode() string {
	if c.StripeSecretKey != "" {
		return "stripe"
	}
	return "test"
}

// Engines names the engine serving each service, as the metrics and the admin area show it.
func (c Config) Engines() map[orders.Service]string {
	return map[orders.Service]string{orders.TTS: c.TTSEngine, orders.STT: c.STTEngine, orders.VTT: c.STTEngine}
}

// speechCacheName names the folders of the voice samples and previews after what speaks
// them: the engines, and for an OpenAI-compatible one its server, model and voice map, so
// that a sample made by one server, model or voice is never played for another (the file
// names inside say the product voice and the language, which the map turns into the
// server's voice).
func (c Config) speechCacheName() string {
	names := slices.Clone(c.TTSEngines)
	for i, e := range names {
		if e == "openai" {
			voices, _ := json.Marshal(c.OpenAITTSVoices) // map keys in order: the same map, the same text
			sum := sha256.Sum256([]byte(c.OpenAITTS.BaseURL + "\n" + c.OpenAITTSModel + "\n" + string(voices)))
			names[i] = "openai-" + hex.EncodeToString(sum[:6])
		}
	}
	return strings.Join(names, "+")
}
