package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/providers/texts"
)

// The page's language: ?lang=, then the order's, then the first of the browser's that we
// speak.
func TestPageLocale(t *testing.T) {
	app := fiber.New()
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString(pageLocale(c, c.Get("X-Order-Locale"))) })
	for _, c := range []struct{ query, order, accept, want string }{
		{"", "", "", "en"},
		{"", "", "fr-FR,fr;q=0.9,ru;q=0.8,en;q=0.7", "ru"},
		{"", "", "en-GB,es;q=0.5", "en"},
		{"", "", "ja-JP", "jp"},
		{"", "", "zh-Hans-CN,zh;q=0.9", "zh"},
		{"", "es", "ru", "es"},
		{"?lang=ar", "es", "ru", "ar"},
		{"?lang=xx", "es", "", "en"},
	} {
		req := httptest.NewRequest("GET", "/"+c.query, nil)
		req.Header.Set("Accept-Language", c.accept)
		req.Header.Set("X-Order-Locale", c.order)
		if got := answer(t, app, req); got != c.want {
			t.Errorf("lang %q, order %q, Accept-Language %q: %s, want %s", c.query, c.order, c.accept, got, c.want)
		}
	}
}

func TestTimeLeft(t *testing.T) {
	d := 9*24*time.Hour + 23*time.Hour + 59*time.Minute + 30*time.Second
	for lng, want := range map[string]string{"en": "9 d 23 h 59 min", "jp": "9日23時間59分", "ru": "9 дн. 23 ч 59 мин"} {
		if got := timeLeft(lng, d); got != want {
			t.Errorf("%s: %q, want %q", lng, got, want)
		}
	}
	if got := timeLeft("en", -time.Hour); got != "0 d 0 h 0 min" {
		t.Errorf("past: %q", got)
	}
	// Each unit in its plural form (CLDR): 9 days are أيام, 2 hours ساعتان, 11 minutes دقيقة.
	for d, want := range map[time.Duration]string{
		d: "9 أيام و23 ساعة و59 دقيقة",
		2*24*time.Hour + 2*time.Hour + 11*time.Minute: "2 يومان و2 ساعتان و11 دقيقة",
		3*time.Hour + 5*time.Minute:                   "0 يوم و3 ساعات و5 دقائق",
	} {
		if got := timeLeft("ar", d); got != want {
			t.Errorf("ar %s: %q, want %q", d, got, want)
		}
	}
}

// The countdown's script gets every plural form of each unit, for Intl.PluralRules to pick.
func TestCountdownUnits(t *testing.T) {
	var units map[string]map[string]string
	if err := json.Unmarshal([]byte(countdownUnits(texts.In("ar"))), &units); err != nil {
		t.Fatal(err)
	}
	if units["d"]["few"] != "{n} أيام" || units["m"]["two"] != "{n} دقيقتان" || len(units["h"]) != 6 {
		t.Errorf("ar units: %v", units)
	}
}

// The link page wears the site's colours: its style's variables are the SPA's own
// (webui/src/styles.css), with the same values.
func TestLinkPageUsesTheSitesColours(t *testing.T) {
	css, err := os.ReadFile(filepath.Join("..", "webui", "src", "styles.css"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := linkPageTemplate.Execute(&b, pageView{Lang: "es", Title: "x", T: texts.In("es").Get, Home: "/es"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	vars := regexp.MustCompile(`(--[a-z-]+):\s*([^;}]+)`)
	found := vars.FindAllStringSubmatch(page, -1)
	if len(found) < 8 {
		t.Fatalf("the page defines %d colour variables", len(found))
	}
	for _, m := range found {
		want := m[1] + ": " + strings.TrimSpace(m[2]) + ";"
		if !strings.Contains(string(css), want) {
			t.Errorf("%s is not the site's (styles.css lacks %q)", m[1], want)
		}
	}
	for _, want := range []string{`class="site-header"`, `<a class="brand-title" href="/es/">Parla</a>`, "paga solo por lo que usas",
		`class="site-footer"`, `<a href="/es/privacy">Política de privacidad</a>`, `<a href="/es/terms">`, `<a href="/es/refunds">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// "Delete now" is obeyed only from this site's own pages: the Origin must name PUBLIC_URL's
// scheme, host and port exactly (an http page of an https site is another origin, and so is
// another port); a browser's Sec-Fetch-Site is believed when it sends one.
func TestSameOriginAgainstPublicURL(t *testing.T) {
	const public = "https://parla.example"
	app := fiber.New()
	app.Post("/", func(c *fiber.Ctx) error {
		if sameOrigin(c, c.Get("X-Public-URL")) {
			return c.SendString("yes")
		}
		return c.SendString("no")
	})
	for _, c := range []struct {
		public, origin, fetchSite string
		want                      bool
	}{
		{public, "https://parla.example", "", true},
		{public, "https://PARLA.example", "", true},
		{public, "https://parla.example:443", "", true},
		{public, "http://parla.example", "", false},
		{public, "http://parla.example:443", "", false},
		{public, "https://parla.example:8443", "", false},
		{public, "https://evil.example", "", false},
		{public, "https://parla.example.evil.example", "", false},
		{public, "null", "", false},
		{public, "", "", false},
		{public, "https://evil.example", "same-origin", true}, // the browser's word wins
		{public, "https://parla.example", "cross-site", false},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", "", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8081", "", false},
		{"http://127.0.0.1:80", "http://127.0.0.1", "", true},
		// Without PUBLIC_URL, the address the request was made to.
		{"", "https://parla.example", "", false},
		{"", "http://parla.example", "", true},
	} {
		req := httptest.NewRequest("POST", "http://parla.example/", nil)
		req.Header.Set("X-Public-URL", c.public)
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.fetchSite != "" {
			req.Header.Set("Sec-Fetch-Site", c.fetchSite)
		}
		if got := answer(t, app, req) == "yes"; got != c.want {
			t.Errorf("PUBLIC_URL %q, Origin %q, Sec-Fetch-Site %q: same origin = %v, want %v", c.public, c.origin, c.fetchSite, got, c.want)
		}
	}
}

// answer is the body of app's answer to req.
func answer(t *testing.T, app *fiber.App, req *http.Request) string {
	t.Helper()
	resp, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
