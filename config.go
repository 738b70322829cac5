package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"parla/api/orders"
	"parla/providers/sqldb"
	"parla/providers/whisper"
)

// Config is everything read from the environment at boot. Each field documents its
// variable; README.md has the same table.
type Config struct {
	Addr      string // ADDR: listen address (default :8080)
	DataDir   string // DATA_DIR: all local state (default ./data)
	PublicURL string // PUBLIC_URL: how visitors reach us (default http://localhost:<port>)

	TTSEngine      string // TTS_ENGINE: espeak (default) or openai
	OpenAIKey      string // OPENAI_API_KEY
	OpenAIBaseURL  string // OPENAI_BASE_URL: any OpenAI-compatible server (default OpenAI's)
	OpenAITTSModel string // OPENAI_TTS_MODEL (default tts-1)

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
	// ALLOW_PRIVATE_URLS=1 lets video links reach loopback and private addresses: for local
	// development and tests only.
	AllowPrivateURLs bool

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
	DBMaxConns  int           // DB_MAX_CONNS: connections to Postgres per node (default 20)
	RescueAfter time.Duration // JOB_RESCUE_AFTER: a job running this long is taken over by another node (default JOB_TIMEOUT+1m)
	NodeID      string        // NODE_ID: this node's name in River's table (default host name + random suffix)

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

	// Metrics and health (README "Metrics and health").
	MetricsAddr  string // METRICS_ADDR: serve /metrics here, without a token, instead of on ADDR
	ReadyMinFree int64  // READY_MIN_FREE_BYTES: /readyz fails below this much free in DATA_DIR (default 512 MiB)
	// STTRequired: STT_ENGINE is set, so an unavailable speech-to-text engine makes the node
	// unready; unset, audio- and video-to-text are closed by configuration.
	STTRequired       bool
	AdminPasswordHash string // ADMIN_PASSWORD_HASH: bcrypt hash (parla hash-password) opening /admin
	AdminToken        string // ADMIN_TOKEN: bearer token (≥ 32 characters) for scripts, /admin and /metrics on ADDR

	// checkpoint is no setting: tests set it to crash the process at a fulfilment step.
	checkpoint func(orderID, step string)
}

// loadConfig reads and validates the configuration; the error lists every problem.
func loadConfig(getenv func(string) string) (Config, error) {
	var errs []error
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	oneOf := func(name, def string, allowed ...string) string {
		v := strings.ToLower(get(name, def))
		for _, a := range allowed {
			if v == a {
				return v
			}
		}
		errs = append(errs, fmt.Errorf("%s=%q: must be one of %s", name, v, strings.Join(allowed, ", ")))
		return def
	}
	integer := func(name string, def int64, lo int64) int64 {
		s := get(name, "")
		if s == "" {
			return def
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < lo {
			errs = append(errs, fmt.Errorf("%s=%q: must be a whole number ≥ %d", name, s, lo))
			return def
		}
		return n
	}
	duration := func(name string, def time.Duration) time.Duration {
		s := get(name, "")
		if s == "" {
			return def
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: must be a positive duration such as 30s or 10m", name, s))
			return def
		}
		return d
	}
	boolean := func(name string) bool {
		switch strings.ToLower(get(name, "")) {
		case "", "0", "false", "no":
			return false
		case "1", "true", "yes":
			return true
		}
		errs = append(errs, fmt.Errorf("%s: must be 1 or 0", name))
		return false
	}

	c := Config{
		Addr:                 get("ADDR", ":8080"),
		DataDir:              get("DATA_DIR", "./data"),
		TTSEngine:            oneOf("TTS_ENGINE", "espeak", "espeak", "openai"),
		OpenAIKey:            get("OPENAI_API_KEY", ""),
		OpenAIBaseURL:        get("OPENAI_BASE_URL", ""),
		OpenAITTSModel:       get("OPENAI_TTS_MODEL", "tts-1"),
		STTEngine:            oneOf("STT_ENGINE", "whisper", "whisper", "openai"),
		OpenAISTTModel:       get("OPENAI_STT_MODEL", "whisper-1"),
		WhisperModel:         get("WHISPER_MODEL", "models/ggml-base.bin"),
		WhisperThreads:       int(integer("WHISPER_THREADS", int64(runtime.NumCPU()), 1)),
		WhisperVAD:           oneOf("WHISPER_VAD", whisper.VADModes[0], whisper.VADModes...),
		WhisperVADFile:       get("WHISPER_VAD_MODEL", "models/ggml-silero-v6.2.0.bin"),
		MaxUploadBytes:       integer("UPLOAD_MAX_BYTES", 25<<20, 1),
		UploadTTL:            duration("UPLOAD_TTL", 24*time.Hour),
		VTTMaxDuration:       duration("VTT_MAX_DURATION", 3*time.Hour),
		STTMaxDuration:       duration("STT_MAX_DURATION", 3*time.Hour),
		AllowPrivateURLs:     boolean("ALLOW_PRIVATE_URLS"),
		StripeSecretKey:      get("STRIPE_SECRET_KEY", ""),
		StripeWebhookSecret:  get("STRIPE_WEBHOOK_SECRET", ""),
		StripePublishableKey: get("STRIPE_PUBLISHABLE_KEY", ""),
		StripeAPIBase:        get("STRIPE_API_BASE", ""),
		AllowTestCheckout:    boolean("ALLOW_TEST_CHECKOUT"),
		SMTPURL:              get("SMTP_URL", ""),
		MailFrom:             get("MAIL_FROM", "Parla <no-reply@localhost>"),
		Storage:              oneOf("STORAGE", "disk", "disk", "minio"),
		MinIOEndpoint:        get("MINIO_ENDPOINT", ""),
		MinIOAccessKey:       get("MINIO_ACCESS_KEY", ""),
		MinIOSecretKey:       get("MINIO_SECRET_KEY", ""),
		MinIOBucket:          get("MINIO_BUCKET", "parla"),
		MinIOUseSSL:          boolean("MINIO_USE_SSL"),
		MinIORegion:          get("MINIO_REGION", ""),
		MinIOPublicEndpoint:  get("MINIO_PUBLIC_ENDPOINT", ""),
		TTSMaxChars:          integer("TTS_MAX_CHARS", 100_000, 1),
		Workers:              int(integer("WORKERS", 2, 1)),
		MaxAttempts:          int(integer("FULFIL_MAX_ATTEMPTS", 5, 1)),
		RetryBase:            duration("FULFIL_RETRY_BASE", 5*time.Second),
		JobTimeout:           duration("JOB_TIMEOUT", 2*time.Hour),
		SweepInterval:        duration("SWEEP_INTERVAL", 10*time.Minute),
		DatabaseURL:          get("DATABASE_URL", ""),
		DBMaxConns:           int(integer("DB_MAX_CONNS", 20, 2)),
		NodeID:               get("NODE_ID", ""),
		RateLimit:            int(integer("RATE_LIMIT", 30, 0)),
		ShutdownGrace:        duration("SHUTDOWN_TIMEOUT", 30*time.Second),
		LogFormat:            oneOf("LOG_FORMAT", "text", "text", "json"),
		MetricsAddr:          get("METRICS_ADDR", ""),
		AdminToken:           get("ADMIN_TOKEN", ""),
		ReadyMinFree:         integer("READY_MIN_FREE_BYTES", 512<<20, 0),
		STTRequired:          get("STT_ENGINE", "") != "",
		AdminPasswordHash:    get("ADMIN_PASSWORD_HASH", ""),
	}
	errs = append(errs, adminErrors(c.AdminPasswordHash, c.AdminToken)...)
	if err := c.LogLevel.UnmarshalText([]byte(get("LOG_LEVEL", "info"))); err != nil {
		errs = append(errs, fmt.Errorf("LOG_LEVEL: %w", err))
	}
	var err error
	if c.Pricing, err = orders.ParsePricing(get("PRICING", "")); err != nil {
		errs = append(errs, fmt.Errorf("PRICING: %w", err))
	}
	for _, p := range strings.Split(get("TRUSTED_PROXIES", ""), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if net.ParseIP(p) == nil {
			_, n, err := net.ParseCIDR(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("TRUSTED_PROXIES: %q is neither an IP nor a CIDR", p))
				continue
			}
			if ones, _ := n.Mask.Size(); ones == 0 {
				errs = append(errs, fmt.Errorf("TRUSTED_PROXIES: %q trusts every address, so any client could choose its own address for the rate limits", p))
				continue
			}
		}
		c.TrustedProxies = append(c.TrustedProxies, p)
	}

	_, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		errs = append(errs, fmt.Errorf("ADDR=%q: must be host:port, for example :8080 or 127.0.0.1:8080", c.Addr))
		port = "8080"
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			errs = append(errs, fmt.Errorf("METRICS_ADDR=%q: must be host:port, for example 10.0.0.5:9090 or :9090", c.MetricsAddr))
		} else if c.MetricsAddr == c.Addr {
			errs = append(errs, fmt.Errorf("METRICS_ADDR=%q: must differ from ADDR", c.MetricsAddr))
		}
	}
	if t := c.AdminToken; t != "" && len(t) < 32 {
		errs = append(errs, errors.New("ADMIN_TOKEN: must be at least 32 characters (for example: openssl rand -hex 24)"))
	}
	c.PublicURL = strings.TrimRight(get("PUBLIC_URL", "http://localhost:"+port), "/")
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		errs = append(errs, fmt.Errorf("PUBLIC_URL=%q: must be an absolute http(s) URL such as https://parla.example", c.PublicURL))
	}
	c.ContactEmail = get("CONTACT_EMAIL", "")
	if c.ContactEmail == "" && u != nil {
		c.ContactEmail = defaultContact(u.Hostname())
	}
	if a, err := mail.ParseAddress(c.ContactEmail); err != nil || a.Address != c.ContactEmail {
		errs = append(errs, fmt.Errorf("CONTACT_EMAIL=%q: must be a bare e-mail address", c.ContactEmail))
	}
	if abs, err := filepath.Abs(c.DataDir); err == nil {
		c.DataDir = abs
	}

	if c.TTSEngine == "openai" && c.OpenAIKey == "" {
		errs = append(errs, errors.New("TTS_ENGINE=openai needs OPENAI_API_KEY"))
	}
	if c.STTEngine == "openai" && c.OpenAIKey == "" {
		errs = append(errs, errors.New("STT_ENGINE=openai needs OPENAI_API_KEY"))
	}
	if c.OpenAIBaseURL != "" {
		if u, err := url.Parse(c.OpenAIBaseURL); err != nil || u.Host == "" {
			errs = append(errs, fmt.Errorf("OPENAI_BASE_URL=%q: must be an absolute URL such as https://api.openai.com/v1", c.OpenAIBaseURL))
		}
	}
	public := u != nil && u.Host != "" && !isLocalHost(u.Hostname())
	if c.StripeSecretKey != "" {
		errs = append(errs, stripeKeyErrors(c, public)...)
		if c.StripeWebhookSecret == "" {
			errs = append(errs, errors.New("STRIPE_SECRET_KEY is set but STRIPE_WEBHOOK_SECRET is not: payments would never be confirmed by webhook"))
		}
		if c.StripePublishableKey == "" {
			errs = append(errs, errors.New("STRIPE_SECRET_KEY is set but STRIPE_PUBLISHABLE_KEY is not: the browser cannot open the checkout"))
		}
	} else if public && !c.AllowTestCheckout {
		errs = append(errs, fmt.Errorf("PUBLIC_URL=%s is public but no STRIPE_SECRET_KEY is set: "+
			"the built-in test checkout would give results away; set Stripe keys or ALLOW_TEST_CHECKOUT=1", c.PublicURL))
	}
	if public && c.AllowPrivateURLs {
		errs = append(errs, fmt.Errorf("ALLOW_PRIVATE_URLS=1 with the public PUBLIC_URL=%s: visitors' links could reach "+
			"this machine and its private network; it is for local development only", c.PublicURL))
	}
	c.RescueAfter = duration("JOB_RESCUE_AFTER", c.JobTimeout+time.Minute)
	if c.RescueAfter < c.JobTimeout {
		errs = append(errs, fmt.Errorf("JOB_RESCUE_AFTER=%s is shorter than JOB_TIMEOUT=%s: a job still running "+
			"would be taken over by another node and run twice", c.RescueAfter, c.JobTimeout))
	}
	errs = append(errs, databaseErrors(c)...)
	if c.Storage == "minio" {
		for name, v := range map[string]string{"MINIO_ENDPOINT": c.MinIOEndpoint,
			"MINIO_ACCESS_KEY": c.MinIOAccessKey, "MINIO_SECRET_KEY": c.MinIOSecretKey} {
			if v == "" {
				errs = append(errs, fmt.Errorf("STORAGE=minio needs %s", name))
			}
		}
	}
	return c, errors.Join(errs...)
}

// databaseErrors checks DATABASE_URL's form (reaching it is tried at boot) and what a
// cluster needs: files every node can read.
func databaseErrors(c Config) []error {
	if c.DatabaseURL == "" {
		return nil
	}
	var errs []error
	u, err := url.Parse(c.DatabaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		errs = append(errs, fmt.Errorf("DATABASE_URL=%s: must be a postgres://user:password@host:5432/dbname URL",
			sqldb.Redact(c.DatabaseURL)))
	}
	if c.Storage != "minio" {
		errs = append(errs, errors.New("DATABASE_URL is set but STORAGE is not minio: with several nodes, an upload or "+
			"a result kept on one node's disk cannot be read by the others; set STORAGE=minio and MINIO_*"))
	}
	return errs
}

// stripeKeyErrors refuses Stripe keys in the wrong places: a publishable key as the secret,
// a secret key where every browser would see it, and test keys on a public site (nobody
// would be charged) unless ALLOW_TEST_CHECKOUT=1 says that is the intent.
func stripeKeyErrors(c Config, public bool) []error {
	var errs []error
	if strings.HasPrefix(c.StripeSecretKey, "pk_") {
		errs = append(errs, errors.New("STRIPE_SECRET_KEY holds a publishable key (pk_…); the secret key starts with sk_ or rk_"))
	}
	if strings.HasPrefix(c.StripePublishableKey, "sk_") || strings.HasPrefix(c.StripePublishableKey, "rk_") {
		errs = append(errs, errors.New("STRIPE_PUBLISHABLE_KEY holds a secret key: it would be sent to every browser; use the pk_… key"))
	}
	isTest := strings.HasPrefix(c.StripeSecretKey, "sk_test_") || strings.HasPrefix(c.StripeSecretKey, "rk_test_")
	if public && isTest && !c.AllowTestCheckout {
		errs = append(errs, fmt.Errorf("PUBLIC_URL=%s is public but STRIPE_SECRET_KEY is a test key: nobody would be "+
			"charged; use live keys or ALLOW_TEST_CHECKOUT=1", c.PublicURL))
	}
	return errs
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

func isLocalHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
