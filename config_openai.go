package main

import (
	"fmt"
	"net/url"
	"strings"

	"parla/providers/openai"
)

// The OpenAI-compatible engines' servers, as the settings name them (OPENAI_*_BASE_URL,
// OPENAI_*_API_KEY, OPENAI_TTS_VOICES), and configured URLs as messages may show them.

// openAIServer is where one service's OpenAI-compatible engine calls, and with which key.
type openAIServer struct {
	BaseURL string // "" = OpenAI's own API
	Key     string // "" = no Authorization header
	// BaseVar and KeyVar name the variables the values came from, for the messages.
	BaseVar, KeyVar string
}

// voices reads OPENAI_TTS_VOICES over the model's shipped voice map.
func (r *envReader) voices(model string) openai.VoiceMap {
	base, err := openai.ShippedVoices(model)
	if err != nil {
		r.fail(fmt.Errorf("OPENAI_TTS_MODEL=%s: %w", model, err))
	}
	m, err := openai.ParseVoices(r.get("OPENAI_TTS_VOICES", ""), base)
	if err != nil {
		r.fail(fmt.Errorf("OPENAI_TTS_VOICES: %w", err))
		return base
	}
	return m
}

// noKey as a key sends none: OPENAI_TTS_API_KEY=none keeps OPENAI_API_KEY (meant for
// OpenAI) from going to a local speech server.
const noKey = "none"

// openAIServer reads one service's base URL and key variables, each falling back to
// OPENAI_BASE_URL and OPENAI_API_KEY, and checks their forms.
func (r *envReader) openAIServer(baseVar, keyVar string) openAIServer {
	s := openAIServer{BaseVar: baseVar, KeyVar: keyVar}
	if s.BaseURL = r.get(s.BaseVar, ""); s.BaseURL == "" {
		s.BaseVar, s.BaseURL = "OPENAI_BASE_URL", r.get("OPENAI_BASE_URL", "")
	}
	if s.Key = r.get(s.KeyVar, ""); s.Key == "" {
		s.KeyVar, s.Key = "OPENAI_API_KEY", r.get("OPENAI_API_KEY", "")
	}
	if s.Key == noKey { // this service's server takes no key, whatever OPENAI_API_KEY says
		s.Key = ""
	}
	if err := baseURLError(s.BaseVar, s.BaseURL); err != nil {
		r.fail(err)
		s.BaseURL = ""
	}
	if strings.ContainsFunc(s.Key, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		r.fail(fmt.Errorf("%s: holds spaces or control characters; a key is one word (for a server that needs none, leave it unset)", s.KeyVar))
	}
	return s
}

// baseURLError refuses a base URL that is not an absolute http(s) URL without query or
// fragment; "" (OpenAI's own API) is fine.
func baseURLError(name, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s=%q: must be an absolute http(s) URL including the API version, "+
			"such as https://api.openai.com/v1 or http://kokoro:8880/v1", name, redactURL(v))
	}
	return nil
}

// redactURL is a configured URL as a log line, an error or a page may show it: a user name
// and password, the query's values and a fragment (where tokens ride) replaced by xxxxx. One
// that cannot be read, and holds an @ or a ?, is not shown at all.
func redactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil {
		if strings.ContainsAny(v, "@?#") {
			return "(unreadable URL, not shown)"
		}
		return v
	}
	if u.User == nil && u.RawQuery == "" && u.Fragment == "" && u.RawFragment == "" {
		return v // nothing to hide: as it was written
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment = "xxxxx", ""
	}
	return u.String()
}
