package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigDefaults(t *testing.T) {
	c, err := loadConfig(envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.PublicURL != "http://localhost:8080" || c.TTSEngine != "espeak" ||
		c.Storage != "disk" || c.PaymentMode() != "test" || c.TTSMaxChars != 100000 || c.RateLimit != 30 ||
		c.STTEngine != "whisper" || c.OpenAISTTModel != "whisper-1" || c.MaxUploadBytes != 25<<20 ||
		c.UploadTTL != 24*time.Hour || c.VTTMaxDuration != 3*time.Hour || c.AllowPrivateURLs || c.WhisperThreads < 1 {
		t.Errorf("defaults = %+v", c)
	}
	if c.MetricsAddr != "" || c.AdminToken != "" || c.ReadyMinFree != 512<<20 || c.STTRequired {
		t.Errorf("metrics and health defaults = %+v", c)
	}
	if c, err := loadConfig(envOf(map[string]string{"STT_ENGINE": "whisper"})); err != nil || !c.STTRequired {
		t.Errorf("STT_ENGINE named: STTRequired = %v, %v", c.STTRequired, err)
	}
	if !strings.HasSuffix(c.DataDir, "/data") {
		t.Errorf("DATA_DIR default = %s", c.DataDir)
	}
}

func TestConfigRefusesBadSettingsWithClearMessages(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"engine", map[string]string{"TTS_ENGINE": "polly"}, "TTS_ENGINE"},
		{"openai without key", map[string]string{"TTS_ENGINE": "openai"}, "OPENAI_API_KEY"},
		{"storage", map[string]string{"STORAGE": "s3"}, "STORAGE"},
		{"minio without endpoint", map[string]string{"STORAGE": "minio", "MINIO_ACCESS_KEY": "a", "MINIO_SECRET_KEY": "b"}, "MINIO_ENDPOINT"},
		{"addr", map[string]string{"ADDR": "8080"}, "ADDR"},
		{"public url", map[string]string{"PUBLIC_URL": "parla.example"}, "PUBLIC_URL"},
		{"stripe half configured", map[string]string{"STRIPE_SECRET_KEY": "sk_test_x"}, "STRIPE_WEBHOOK_SECRET"},
		{"test checkout in public", map[string]string{"PUBLIC_URL": "https://parla.example"}, "ALLOW_TEST_CHECKOUT"},
		{"pricing", map[string]string{"PRICING": "{"}, "PRICING"},
		{"max chars", map[string]string{"TTS_MAX_CHARS": "0"}, "TTS_MAX_CHARS"},
		{"duration", map[string]string{"FULFIL_RETRY_BASE": "soon"}, "FULFIL_RETRY_BASE"},
		{"proxies", map[string]string{"TRUSTED_PROXIES": "10.0.0.1,nope"}, "TRUSTED_PROXIES"},
		{"log level", map[string]string{"LOG_LEVEL": "loud"}, "LOG_LEVEL"},
		{"stt engine", map[string]string{"STT_ENGINE": "vosk"}, "STT_ENGINE"},
		{"metrics addr", map[string]string{"METRICS_ADDR": "9090"}, "METRICS_ADDR"},
		{"metrics on the public address", map[string]string{"METRICS_ADDR": ":8080"}, "must differ from ADDR"},
		{"short admin token", map[string]string{"ADMIN_TOKEN": "secret"}, "ADMIN_TOKEN"},
		{"free space", map[string]string{"READY_MIN_FREE_BYTES": "1GB"}, "READY_MIN_FREE_BYTES"},
		{"whisper vad", map[string]string{"WHISPER_VAD": "webrtc"}, "WHISPER_VAD"},
		{"openai stt without key", map[string]string{"STT_ENGINE": "openai"}, "OPENAI_API_KEY"},
		{"upload limit", map[string]string{"UPLOAD_MAX_BYTES": "25MB"}, "UPLOAD_MAX_BYTES"},
		{"upload ttl", map[string]string{"UPLOAD_TTL": "-1h"}, "UPLOAD_TTL"},
		{"video maximum", map[string]string{"VTT_MAX_DURATION": "3"}, "VTT_MAX_DURATION"},
		{"private urls", map[string]string{"ALLOW_PRIVATE_URLS": "maybe"}, "ALLOW_PRIVATE_URLS"},
		{"whisper threads", map[string]string{"WHISPER_THREADS": "0"}, "WHISPER_THREADS"},
		{"test checkout on public http", map[string]string{"PUBLIC_URL": "http://parla.example"}, "ALLOW_TEST_CHECKOUT"},
		{"private urls in public", map[string]string{"PUBLIC_URL": "https://parla.example", "ALLOW_TEST_CHECKOUT": "1",
			"ALLOW_PRIVATE_URLS": "1"}, "ALLOW_PRIVATE_URLS"},
		{"stripe test key in public", map[string]string{"PUBLIC_URL": "https://parla.example", "STRIPE_SECRET_KEY": "sk_test_x",
			"STRIPE_WEBHOOK_SECRET": "whsec_x", "STRIPE_PUBLISHABLE_KEY": "pk_test_x"}, "test key"},
		{"publishable key as the secret", map[string]string{"STRIPE_SECRET_KEY": "pk_live_x",
			"STRIPE_WEBHOOK_SECRET": "whsec_x", "STRIPE_PUBLISHABLE_KEY": "pk_live_x"}, "STRIPE_SECRET_KEY holds a publishable key"},
		{"secret key for the browser", map[string]string{"STRIPE_SECRET_KEY": "sk_live_x",
			"STRIPE_WEBHOOK_SECRET": "whsec_x", "STRIPE_PUBLISHABLE_KEY": "sk_live_x"}, "STRIPE_PUBLISHABLE_KEY holds a secret key"},
		{"every address a proxy", map[string]string{"TRUSTED_PROXIES": "0.0.0.0/0"}, "TRUSTED_PROXIES"},
		{"every v6 address a proxy", map[string]string{"TRUSTED_PROXIES": "10.0.0.1, ::/0"}, "TRUSTED_PROXIES"},
		{"database url not postgres", map[string]string{"DATABASE_URL": "mysql://u:pw@db/parla", "STORAGE": "minio",
			"MINIO_ENDPOINT": "m:9000", "MINIO_ACCESS_KEY": "a", "MINIO_SECRET_KEY": "b"}, "DATABASE_URL"},
		{"cluster on local disk", map[string]string{"DATABASE_URL": "postgres://u:pw@db/parla"}, "STORAGE is not minio"},
		{"rescue before the timeout", map[string]string{"JOB_TIMEOUT": "1h", "JOB_RESCUE_AFTER": "30m"}, "JOB_RESCUE_AFTER"},
		{"tts base url without scheme", map[string]string{"OPENAI_TTS_BASE_URL": "kokoro:8880/v1"}, "OPENAI_TTS_BASE_URL"},
		{"stt base url of another scheme", map[string]string{"OPENAI_STT_BASE_URL": "ftp://speaches/v1"}, "OPENAI_STT_BASE_URL"},
		{"shared base url with a query", map[string]string{"OPENAI_BASE_URL": "http://ai.internal/v1?x=1"}, "OPENAI_BASE_URL"},
		{"tts key with a space", map[string]string{"OPENAI_TTS_API_KEY": "sk one"}, "OPENAI_TTS_API_KEY"},
		{"openai tts, OpenAI's API, no key", map[string]string{"TTS_ENGINE": "openai", "OPENAI_STT_BASE_URL": "http://s:8000/v1"},
			"TTS_ENGINE=openai needs OPENAI_TTS_API_KEY or OPENAI_API_KEY"},
		{"tts voices, bad entry", map[string]string{"OPENAI_TTS_VOICES": "es:nova"}, "OPENAI_TTS_VOICES: \"es:nova\": want voice=name"},
		{"tts voices, a language short", map[string]string{"OPENAI_TTS_MODEL": "kokoro", "OPENAI_TTS_VOICES": "de:nova=x"},
			"OPENAI_TTS_VOICES: de names no voice for alloy"},
		{"tts engine list, one unknown", map[string]string{"TTS_ENGINE": "openai,polly", "OPENAI_API_KEY": "k"}, `TTS_ENGINE: "polly"`},
		{"tts engine list, twice", map[string]string{"TTS_ENGINE": "espeak,espeak"}, "TTS_ENGINE: espeak is named twice"},
		{"tts engine list with openai, no key", map[string]string{"TTS_ENGINE": "espeak,openai"}, "TTS_ENGINE=espeak,openai needs OPENAI_TTS_API_KEY"},
		{"tts languages beyond the voice map", map[string]string{"OPENAI_TTS_MODEL": "kokoro", "OPENAI_TTS_LANGUAGES": "en,tr"},
			"OPENAI_TTS_LANGUAGES: tr has no voices"},
		{"openai stt, key none for OpenAI's API", map[string]string{"STT_ENGINE": "openai", "OPENAI_STT_API_KEY": "none"},
			"STT_ENGINE=openai needs OPENAI_STT_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadConfig(envOf(tt.env))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one naming %s", err, tt.want)
			}
		})
	}
}

// TestConfigOpenAIServersPerService: each service's server and key fall back to the shared
// ones on their own; "none" sends no key; a server at a base URL needs none.
func TestConfigOpenAIServersPerService(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		tts, stt openAIServer
	}{
		{"shared", map[string]string{"OPENAI_BASE_URL": "http://ai:8000/v1", "OPENAI_API_KEY": "k"},
			openAIServer{"http://ai:8000/v1", "k", "OPENAI_BASE_URL", "OPENAI_API_KEY"},
			openAIServer{"http://ai:8000/v1", "k", "OPENAI_BASE_URL", "OPENAI_API_KEY"}},
		{"kokoro for speech, OpenAI for transcripts", map[string]string{"TTS_ENGINE": "openai", "STT_ENGINE": "openai",
			"OPENAI_TTS_BASE_URL": "http://kokoro:8880/v1", "OPENAI_TTS_API_KEY": "none", "OPENAI_API_KEY": "sk-o"},
			openAIServer{"http://kokoro:8880/v1", "", "OPENAI_TTS_BASE_URL", "OPENAI_TTS_API_KEY"},
			openAIServer{"", "sk-o", "OPENAI_BASE_URL", "OPENAI_API_KEY"}},
		{"each its own", map[string]string{"TTS_ENGINE": "openai", "STT_ENGINE": "openai",
			"OPENAI_TTS_BASE_URL": "http://kokoro:8880/v1", "OPENAI_STT_BASE_URL": "https://speaches.lan/v1",
			"OPENAI_STT_API_KEY": "sp", "OPENAI_BASE_URL": "http://unused/v1"},
			openAIServer{"http://kokoro:8880/v1", "", "OPENAI_TTS_BASE_URL", "OPENAI_API_KEY"},
			openAIServer{"https://speaches.lan/v1", "sp", "OPENAI_STT_BASE_URL", "OPENAI_STT_API_KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.OpenAITTS != tt.tts || c.OpenAISTT != tt.stt {
				t.Errorf("tts %+v\nstt %+v\nwant %+v\n and %+v", c.OpenAITTS, c.OpenAISTT, tt.tts, tt.stt)
			}
		})
	}
}

func TestConfigEngineList(t *testing.T) {
	c, err := loadConfig(envOf(map[string]string{"TTS_ENGINE": " OpenAI , espeak", "OPENAI_TTS_BASE_URL": "http://kokoro:8880/v1"}))
	if err != nil || !slices.Equal(c.TTSEngines, []string{"openai", "espeak"}) || c.TTSEngine != "openai,espeak" {
		t.Errorf("engines %v (%q), %v", c.TTSEngines, c.TTSEngine, err)
	}
	if !strings.HasPrefix(c.speechCacheName(), "openai-") || !strings.HasSuffix(c.speechCacheName(), "+espeak") {
		t.Errorf("cache %s", c.speechCacheName())
	}
}

// TestSpeechCacheName: samples and previews are kept apart for each engine, server, model
// and voice map, so that none is played for a voice that did not make it.
func TestSpeechCacheName(t *testing.T) {
	name := func(env map[string]string) string {
		t.Helper()
		c, err := loadConfig(envOf(env))
		if err != nil {
			t.Fatal(err)
		}
		return c.speechCacheName()
	}
	kokoro := map[string]string{"TTS_ENGINE": "openai", "OPENAI_TTS_BASE_URL": "http://kokoro:8880/v1", "OPENAI_TTS_MODEL": "kokoro"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for k, v := range kokoro {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		return m
	}
	names := map[string]string{
		"espeak":      name(nil),
		"kokoro":      name(kokoro),
		"other map":   name(with("OPENAI_TTS_VOICES", "es:nova=em_santa")),
		"other url":   name(with("OPENAI_TTS_BASE_URL", "http://kokoro2:8880/v1")),
		"other model": name(with("OPENAI_TTS_MODEL", "tts-1")),
	}
	seen := map[string]string{}
	for what, n := range names {
		if other, ok := seen[n]; ok {
			t.Errorf("%s and %s share the cache %s", what, other, n)
		}
		seen[n] = what
	}
	if names["espeak"] != "espeak" || !strings.HasPrefix(names["kokoro"], "openai-") || name(kokoro) != names["kokoro"] {
		t.Errorf("names %v", names)
	}
}

func TestConfigAcceptsExplicitTestCheckoutAndFullStripe(t *testing.T) {
	if _, err := loadConfig(envOf(map[string]string{"PUBLIC_URL": "https://parla.example", "ALLOW_TEST_CHECKOUT": "1"})); err != nil {
		t.Errorf("explicit test checkout refused: %v", err)
	}
	c, err := loadConfig(envOf(map[string]string{"PUBLIC_URL": "https://parla.example/", "STRIPE_SECRET_KEY": "sk_live_x",
		"STRIPE_WEBHOOK_SECRET": "whsec_x", "STRIPE_PUBLISHABLE_KEY": "pk_live_x"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.PaymentMode() != "stripe" || c.PublicURL != "https://parla.example" {
		t.Errorf("got mode %s, public URL %s", c.PaymentMode(), c.PublicURL)
	}
	// Staging on a public URL with Stripe's test keys, said out loud.
	if _, err := loadConfig(envOf(map[string]string{"PUBLIC_URL": "https://staging.parla.example", "STRIPE_SECRET_KEY": "sk_test_x",
		"STRIPE_WEBHOOK_SECRET": "whsec_x", "STRIPE_PUBLISHABLE_KEY": "pk_test_x", "ALLOW_TEST_CHECKOUT": "1"})); err != nil {
		t.Errorf("explicit test keys in public refused: %v", err)
	}
}

func TestConfigAcceptsLocalAddresses(t *testing.T) {
	for _, u := range []string{"https://[::1]:8443", "http://127.0.0.1:8080", "http://localhost:8080", "http://parla.localhost"} {
		c, err := loadConfig(envOf(map[string]string{"PUBLIC_URL": u, "ALLOW_PRIVATE_URLS": "1"}))
		if err != nil {
			t.Errorf("%s refused: %v", u, err)
			continue
		}
		if strings.Contains(c.ContactEmail, "127.0.0.1") || strings.Contains(c.ContactEmail, "::1") {
			t.Errorf("%s: contact %q is not an address anyone can write to", u, c.ContactEmail)
		}
	}
}
