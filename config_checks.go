package main

import (
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/url"
	"slices"
	"strings"

	"parla/providers/sqldb"
)

// problems checks a configuration read (config.go): the forms reading leaves open
// (addresses, URLs, secrets) and the settings that must agree with each other. Each message
// names its variables, as an operator reads them at boot.
func (c Config) problems() []error {
	public := isPublic(c.PublicURL)
	return slices.Concat(
		adminErrors(c.AdminPasswordHash, c.AdminToken, c.AdminSessionKey),
		addressErrors(c),
		engineErrors(c),
		paymentErrors(c, public),
		privateURLErrors(c, public),
		jobErrors(c),
		databaseErrors(c),
		storageErrors(c),
	)
}

// addressErrors checks the addresses the site listens on and is reached at.
func addressErrors(c Config) []error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("ADDR=%q: must be host:port, for example :8080 or 127.0.0.1:8080", c.Addr))
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			errs = append(errs, fmt.Errorf("METRICS_ADDR=%q: must be host:port, for example 10.0.0.5:9090 or :9090", c.MetricsAddr))
		} else if c.MetricsAddr == c.Addr {
			errs = append(errs, fmt.Errorf("METRICS_ADDR=%q: must differ from ADDR", c.MetricsAddr))
		}
	}
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		errs = append(errs, fmt.Errorf("PUBLIC_URL=%q: must be an absolute http(s) URL such as https://parla.example", redactURL(c.PublicURL)))
	}
	if a, err := netmail.ParseAddress(c.ContactEmail); err != nil || a.Address != c.ContactEmail {
		errs = append(errs, fmt.Errorf("CONTACT_EMAIL=%q: must be a bare e-mail address", c.ContactEmail))
	}
	return errs
}

// engineErrors checks that the OpenAI engines can call OpenAI: its own API takes no call
// without a key (a server at another base URL may need none).
func engineErrors(c Config) []error {
	var errs []error
	for _, e := range []struct {
		engine, variable string
		server           openAIServer
	}{{c.TTSEngine, "TTS_ENGINE", c.OpenAITTS}, {c.STTEngine, "STT_ENGINE", c.OpenAISTT}} {
		if slices.Contains(strings.Split(e.engine, ","), "openai") && e.server.BaseURL == "" && e.server.Key == "" {
			errs = append(errs, fmt.Errorf("%s=%s needs OPENAI_%s_API_KEY or OPENAI_API_KEY for OpenAI's API "+
				"(a server at OPENAI_%[3]s_BASE_URL or OPENAI_BASE_URL may need no key)", e.variable, e.engine, e.variable[:3]))
		}
	}
	return errs
}

// paymentErrors checks that Stripe is configured whole, and that a public site takes real
// payments unless ALLOW_TEST_CHECKOUT=1 says otherwise.
func paymentErrors(c Config, public bool) []error {
	if c.StripeSecretKey == "" {
		if public && !c.AllowTestCheckout {
			return []error{fmt.Errorf("PUBLIC_URL=%s is public but no STRIPE_SECRET_KEY is set: "+
				"the built-in test checkout would give results away; set Stripe keys or ALLOW_TEST_CHECKOUT=1", redactURL(c.PublicURL))}
		}
		return nil
	}
	errs := stripeKeyErrors(c, public)
	if c.StripeWebhookSecret == "" {
		errs = append(errs, errors.New("STRIPE_SECRET_KEY is set but STRIPE_WEBHOOK_SECRET is not: payments would never be confirmed by webhook"))
	}
	if c.StripePublishableKey == "" {
		errs = append(errs, errors.New("STRIPE_SECRET_KEY is set but STRIPE_PUBLISHABLE_KEY is not: the browser cannot open the checkout"))
	}
	return errs
}

// privateURLErrors refuses ALLOW_PRIVATE_URLS on a public site: visitors' video links
// would reach into this machine's network.
func privateURLErrors(c Config, public bool) []error {
	if !public || !c.AllowPrivateURLs {
		return nil
	}
	return []error{fmt.Errorf("ALLOW_PRIVATE_URLS=1 with the public PUBLIC_URL=%s: visitors' links could reach "+
		"this machine and its private network; it is for local development only", redactURL(c.PublicURL))}
}

// minLeaseBeats is how many heartbeats a node's lease must span at least: the defaults
// (2 s and 10 s) give exactly three.
const minLeaseBeats = 3

// jobErrors checks that a job is taken over by another node only once it cannot be running.
func jobErrors(c Config) []error {
	var errs []error
	// A node's lease (its right to start engine processes) ends two beats before others
	// may judge it dead, and each beat renews it: it must span minLeaseBeats beats, so that
	// a slow or lost beat or two (a busy database) do not end it and fail the node's runs.
	if c.HeartbeatEvery > 0 && c.NodeDeadAfter < (minLeaseBeats+2)*c.HeartbeatEvery {
		errs = append(errs, fmt.Errorf("NODE_DEAD_AFTER=%s is less than %d NODE_HEARTBEAT=%s: a node's lease "+
			"(NODE_DEAD_AFTER less two beats) would span fewer than %d beats, and a slow beat or two would fail its runs",
			c.NodeDeadAfter, minLeaseBeats+2, c.HeartbeatEvery, minLeaseBeats))
	}
	if c.RescueAfter >= c.JobTimeout {
		return errs
	}
	return append(errs, fmt.Errorf("JOB_RESCUE_AFTER=%s is shorter than JOB_TIMEOUT=%s: a job still running "+
		"would be taken over by another node and run twice", c.RescueAfter, c.JobTimeout))
}

// storageErrors checks that MinIO storage has its address and keys.
func storageErrors(c Config) []error {
	if c.Storage != "minio" {
		return nil
	}
	var errs []error
	for _, v := range [][2]string{{"MINIO_ENDPOINT", c.MinIOEndpoint},
		{"MINIO_ACCESS_KEY", c.MinIOAccessKey}, {"MINIO_SECRET_KEY", c.MinIOSecretKey}} {
		if v[1] == "" {
			errs = append(errs, fmt.Errorf("STORAGE=minio needs %s", v[0]))
		}
	}
	return errs
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
			"charged; use live keys or ALLOW_TEST_CHECKOUT=1", redactURL(c.PublicURL)))
	}
	return errs
}

func isLocalHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// isPublic says whether visitors reach the site from other machines: PUBLIC_URL names a
// host that is not this one.
func isPublic(publicURL string) bool {
	u, err := url.Parse(publicURL)
	return err == nil && u.Host != "" && !isLocalHost(u.Hostname())
}
