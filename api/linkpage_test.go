package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
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
