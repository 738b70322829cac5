package main

import (
	"fmt"
	"time"

	v1 "parla/api/v1"
)

// APISettings are the settings of Parla from code: /v1 and its prepaid credit (README.md,
// "Use Parla from code").
type APISettings struct {
	CreditMin int64 // API_CREDIT_MIN: the least API credit one purchase buys, in cents (default 500)
	CreditMax int64 // API_CREDIT_MAX: the most, in cents (default 10000)
	// API_CREDIT_VALID_DAYS: how long bought credit lasts, in days (default 365, at most
	// maxCreditValidDays).
	CreditValidDays int64
	// API_MAX_TRANSCRIPTION: the longest file one API transcription takes (default 30m,
	// v1.DefaultMaxTranscription; STT_MAX_DURATION bounds it too).
	APIMaxTranscription time.Duration
}

// maxCreditValidDays bounds API_CREDIT_VALID_DAYS: ten years.
const maxCreditValidDays = 3650

// readAPI reads the API's and its credit's settings.
func (r *envReader) readAPI(c *APISettings) {
	c.CreditMin = r.integer("API_CREDIT_MIN", 500, 1)
	c.CreditMax = r.integer("API_CREDIT_MAX", 10_000, c.CreditMin)
	if c.CreditValidDays = r.integer("API_CREDIT_VALID_DAYS", 365, 1); c.CreditValidDays > maxCreditValidDays {
		r.fail(fmt.Errorf("API_CREDIT_VALID_DAYS=%d: must be at most %d", c.CreditValidDays, maxCreditValidDays))
		c.CreditValidDays = 365
	}
	c.APIMaxTranscription = r.duration("API_MAX_TRANSCRIPTION", v1.DefaultMaxTranscription)
}

// CreditTTL is how long bought credit lasts.
func (c APISettings) CreditTTL() time.Duration {
	return time.Duration(c.CreditValidDays) * 24 * time.Hour
}
