package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"parla/api/health"
	"parla/providers/openai"
	"parla/providers/testkit"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://kokoro:8880/v1":                   "http://kokoro:8880/v1",
		"http://alice:s3cret@kokoro:8880/v1":      "http://xxxxx@kokoro:8880/v1",
		"https://token@api.example/v1":            "https://xxxxx@api.example/v1",
		"https://api.example/v1?token=s3cret&x=1": "https://api.example/v1?token=xxxxx&x=xxxxx",
		"https://api.example/v1#s3cret":           "https://api.example/v1#xxxxx",
		"not a url":                               "not a url",
		"http://alice:s3cret@[::1/v1":             "(unreadable URL, not shown)",
		"":                                        "",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// An engine base URL's credentials (user:pass@, a query's token) are never printed: not by
// the configuration's refusal, not at boot when its server is down, not in /readyz's
// detail and reasons.
func TestEngineURLCredentialsAreNeverShown(t *testing.T) {
	secret := func(s string) bool {
		return strings.Contains(s, "s3cret") || strings.Contains(s, "alice") || strings.Contains(s, "qtok")
	}
	_, err := loadConfig(envOf(map[string]string{"STT_ENGINE": "openai", "OPENAI_API_KEY": "k",
		"OPENAI_BASE_URL": "http://alice:s3cret@127.0.0.1:1/v1?token=qtok"}))
	if err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") || secret(err.Error()) {
		t.Errorf("the refusal of a base URL with a query: %v", err)
	}
	_, err = loadConfig(envOf(map[string]string{"PUBLIC_URL": "ftp://alice:s3cret@parla.example"}))
	if err == nil || secret(err.Error()) {
		t.Errorf("the refusal of a PUBLIC_URL: %v", err)
	}

	base := "http://alice:s3cret@" + testkit.FreePort(t) + "/v1" // nobody listens
	var logs bytes.Buffer
	a := &App{log: slog.New(slog.NewTextHandler(&logs, nil)), cfg: Config{STTRequired: true},
		servers: health.Servers(openai.NewSpeaker(openai.Config{BaseURL: base}), nil)}
	health.AskServers(context.Background(), a.servers, a.log)
	if !strings.Contains(logs.String(), "speech server down at start") || secret(logs.String()) {
		t.Errorf("the boot's line: %s", logs.String())
	}
	for _, c := range health.ServerChecks(a.servers, a.cfg.STTRequired) {
		err := c.Run(context.Background())
		if shown := fmt.Sprint(c.Detail, " ", err); err == nil || secret(shown) {
			t.Errorf("/readyz's %s: %s", c.Name, shown)
		}
	}
}
