package api

import (
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
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 8)
		n, _ := resp.Body.Read(buf)
		if got := string(buf[:n]); got != c.want {
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
