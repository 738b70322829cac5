package api

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

// directive is the value of one directive of a Content-Security-Policy ("" when absent).
func directive(policy, name string) (string, bool) {
	for _, d := range strings.Split(policy, ";") {
		d = strings.TrimSpace(d)
		if d == name || strings.HasPrefix(d, name+" ") {
			return strings.TrimSpace(strings.TrimPrefix(d, name)), true
		}
	}
	return "", false
}

var inlineScript = regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`)

// The app's pages (/tts, every SPA page, the not-found page) may not be framed, run no
// script but the site's own files and those of their hashes, load no plugin and keep
// their base.
func TestPagesForbidFramingAndForeignScripts(t *testing.T) {
	index := strings.Replace(builtIndex, "</head>",
		`<script type="module" crossorigin src="/assets/index-x.js"></script></head>`, 1)
	ui := fstest.MapFS{"index.html": {Data: []byte(index)}, "assets/index-x.js": {Data: []byte("1")},
		".vite/manifest.json": {Data: []byte(manifest)}}
	for _, mode := range []string{"test", "stripe"} {
		app := New(Config{PaymentMode: mode, PublicURL: "https://parla.example"},
			Deps{UI: ui, Locales: os.DirFS("../webui/src/locales"), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		for _, path := range []string{"/tts", "/", "/es/sst", "/ar/vtt", "/payment/success", "/no-such-page"} {
			resp, err := app.Test(httptest.NewRequest("GET", path, nil), -1)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			csp := resp.Header.Get("Content-Security-Policy")
			if xfo := resp.Header.Get("X-Frame-Options"); xfo != "DENY" {
				t.Errorf("%s %s: X-Frame-Options %q", mode, path, xfo)
			}
			for name, want := range map[string]string{"frame-ancestors": "'none'", "object-src": "'none'", "base-uri": "'self'"} {
				if got, _ := directive(csp, name); got != want {
					t.Errorf("%s %s: %s %q, want %q (policy %q)", mode, path, name, got, want, csp)
				}
			}
			scripts, ok := directive(csp, "script-src")
			if !ok {
				scripts, ok = directive(csp, "default-src")
			}
			if !ok || strings.Contains(scripts, "'unsafe-inline'") || strings.Contains(scripts, "'unsafe-eval'") ||
				strings.Contains(scripts, "*") && !strings.Contains(scripts, "https://*.js.stripe.com") ||
				!strings.Contains(scripts, "'self'") {
				t.Errorf("%s %s: scripts %q", mode, path, scripts)
			}
			// Every script element the page runs is a file of the site or allowed by hash.
			for _, m := range inlineScript.FindAllStringSubmatch(string(body), -1) {
				attrs, code := m[1], m[2]
				if strings.Contains(attrs, "src=") || strings.Contains(attrs, `type="application/json"`) {
					continue
				}
				sum := sha256.Sum256([]byte(code))
				if !strings.Contains(scripts, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
					t.Errorf("%s %s: an inline script the policy does not allow: %.80q", mode, path, code)
				}
			}
		}
	}
}

// Answers that are not pages (JSON) are not framed either, and the app's policy is kept
// for pages.
func TestFramePolicyOnEveryAnswer(t *testing.T) {
	app := New(Config{}, Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	resp, err := app.Test(httptest.NewRequest("GET", "/healthz", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("/healthz: X-Frame-Options %q", resp.Header.Get("X-Frame-Options"))
	}
	if stripe := appPolicy("stripe"); !strings.Contains(stripe, "https://js.stripe.com") || strings.Contains(appPolicy("test"), "stripe") {
		t.Errorf("Stripe.js is allowed in stripe mode only: %q / %q", stripe, appPolicy("test"))
	}
}
