package main

import (
	"strings"
	"testing"
	"time"
)

// The API's settings: API_CREDIT_VALID_DAYS (365 unless set; asked for in issue 39's
// review, fixed in code before) and API_MAX_TRANSCRIPTION (30m), each refused by name when
// malformed.
func TestConfigAPISettings(t *testing.T) {
	c, err := loadConfig(envOf(nil))
	if err != nil || c.CreditValidDays != 365 || c.CreditTTL() != 365*24*time.Hour || c.APIMaxTranscription != 30*time.Minute ||
		c.CreditMin != 500 || c.CreditMax != 10_000 {
		t.Errorf("defaults: %+v, %v", c.APISettings, err)
	}
	c, err = loadConfig(envOf(map[string]string{"API_CREDIT_VALID_DAYS": "90", "API_MAX_TRANSCRIPTION": "45m"}))
	if err != nil || c.CreditTTL() != 90*24*time.Hour || c.APIMaxTranscription != 45*time.Minute {
		t.Errorf("set: %+v, %v", c.APISettings, err)
	}
	for env, want := range map[string]string{
		"API_CREDIT_VALID_DAYS=0": "API_CREDIT_VALID_DAYS", "API_CREDIT_VALID_DAYS=3651": "API_CREDIT_VALID_DAYS",
		"API_CREDIT_VALID_DAYS=1y": "API_CREDIT_VALID_DAYS", "API_MAX_TRANSCRIPTION=30": "API_MAX_TRANSCRIPTION",
	} {
		name, value, _ := strings.Cut(env, "=")
		if _, err := loadConfig(envOf(map[string]string{name: value})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", env, err, want)
		}
	}
}
