package api

import (
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gofiber/fiber/v2"
)

// builtIndex is index.html as Vite leaves it (the parts the renderer rewrites).
const builtIndex = `<!doctype html>
<html lang="en" dir="ltr">
  <head>
    <meta charset="UTF-8" />
    <title>Parla</title>
    <meta name="description" content="Pay-per-use text-to-speech and transcription. No account, no subscription." />
  </head>
  <body><div id="root"></div></body>
</html>`

// pagesApp serves the spa handler with the real locale files and the given retention.
func pagesApp(t *testing.T, ret Retention) *fiber.App {
	t.Helper()
	pages, err := newPageRenderer("https://parla.example/", os.DirFS("../webui/src/locales"),
		siteInfo{Contact: "hello@parla.example", Version: "v9.8.7", Retention: ret})
	if err != nil {
		t.Fatal(err)
	}
	ui := fstest.MapFS{"index.html": {Data: []byte(builtIndex)}, "og.png": {Data: []byte("png")},
		".vite/manifest.json": {Data: []byte(manifest)}}
	pages.preloads = readPreloads(ui)
	s := &server{deps: Deps{UI: ui}, pages: pages}
	app := fiber.New()
	app.Use(s.spa)
	return app
}

func getPage(t *testing.T, app *fiber.App, path string) (int, string, string) {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest("GET", path, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header.Get("Location")
}

// attr finds the content/href of the first tag matching pattern (a regexp prefix).
func attr(t *testing.T, page, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern + `[^>]*?(?:content|href)="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return strings.NewReplacer("&amp;", "&", "&#34;", `"`, "&#39;", "'").Replace(m[1])
}

func TestPagesAreRenderedPerRouteAndLanguage(t *testing.T) {
	app := pagesApp(t, NewRetention(10*24*time.Hour, 24*time.Hour, 24*time.Hour, 30*time.Minute))
	tests := []struct {
		path, lang, dir, canonical string
		title, description         string // substrings, from the locale files
	}{
		{"/", "en", "ltr", "https://parla.example/", "Parla — pay-per-use text to speech", "No registration, no subscription"},
		{"/tts", "en", "ltr", "https://parla.example/tts", "Text to speech · Parla", "Turn your text into natural speech"},
		{"/es/tts", "es", "ltr", "https://parla.example/es/tts", "Texto a voz · Parla", ""},
		{"/es", "es", "ltr", "https://parla.example/es", "Parla: texto a voz", ""},
		{"/ja/sst", "ja", "ltr", "https://parla.example/ja/sst", "音声の文字起こし", ""},
		{"/ru/vtt/", "ru", "ltr", "https://parla.example/ru/vtt", "Parla", ""},
		{"/zh/terms", "zh-Hans", "ltr", "https://parla.example/zh/terms", "服务条款 · ", "Parla 按次付费语音工具的条款"},
		{"/ar/privacy", "ar", "rtl", "https://parla.example/ar/privacy", "سياسة الخصوصية · ", "10"},
		{"/refunds", "en", "ltr", "https://parla.example/refunds", "Refund policy · Parla", "automatically and in full"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, page, _ := getPage(t, app, tt.path)
			if status != 200 {
				t.Fatalf("status %d", status)
			}
			if want := `<html lang="` + tt.lang + `" dir="` + tt.dir + `">`; !strings.Contains(page, want) {
				t.Errorf("no %s in %.200s", want, page)
			}
			if n := strings.Count(page, "<title>"); n != 1 {
				t.Errorf("%d titles", n)
			}
			title := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(page)[1]
			title = strings.ReplaceAll(title, "&amp;", "&")
			if !strings.Contains(title, tt.title) {
				t.Errorf("title %q, want it to contain %q", title, tt.title)
			}
			desc := attr(t, page, `<meta name="description"`)
			if desc == "" || strings.Contains(desc, "Pay-per-use text-to-speech and transcription. No account") || !strings.Contains(desc, tt.description) {
				t.Errorf("description %q, want one from the locale containing %q", desc, tt.description)
			}
			if n := strings.Count(page, `name="description"`); n != 1 {
				t.Errorf("%d descriptions", n)
			}
			if got := attr(t, page, `<link rel="canonical"`); got != tt.canonical {
				t.Errorf("canonical %q, want %q", got, tt.canonical)
			}
			if got := attr(t, page, `<meta property="og:url"`); got != tt.canonical {
				t.Errorf("og:url %q, want %q", got, tt.canonical)
			}
			if got := attr(t, page, `<meta property="og:title"`); got != strings.ReplaceAll(title, "&#39;", "'") {
				t.Errorf("og:title %q, want the title %q", got, title)
			}
			if got := attr(t, page, `<meta property="og:description"`); got != desc {
				t.Errorf("og:description %q, want %q", got, desc)
			}
			if got := attr(t, page, `<meta property="og:image"`); got != "https://parla.example/og.png" {
				t.Errorf("og:image %q", got)
			}
			// Every page names all six languages and x-default, each at its own address.
			route := strings.TrimSuffix(strings.TrimPrefix(tt.canonical, "https://parla.example"), "/")
			for _, pre := range []string{"/es", "/ja", "/ru", "/zh", "/ar"} {
				route = strings.TrimPrefix(route, pre)
			}
			for hl, prefix := range map[string]string{"en": "", "x-default": "", "ja": "/ja", "es": "/es", "ru": "/ru", "zh": "/zh", "ar": "/ar"} {
				want := "https://parla.example" + prefix + route
				if prefix == "" && route == "" {
					want += "/"
				}
				if got := attr(t, page, `<link rel="alternate" hreflang="`+hl+`"`); got != want {
					t.Errorf("hreflang %s = %q, want %q", hl, got, want)
				}
			}
			if n := strings.Count(page, `rel="alternate"`); n != 7 {
				t.Errorf("%d alternates, want 7", n)
			}
			if got := attr(t, page, `<meta name="parla:site"`); !strings.Contains(got, `"contact":"hello@parla.example"`) || !strings.Contains(got, `"version":"v9.8.7"`) {
				t.Errorf("site info %q lacks the contact and version", got)
			}
		})
	}
}

func TestUnknownRoutesAre404InTheirLanguage(t *testing.T) {
	app := pagesApp(t, Retention{})
	for path, want := range map[string]string{
		"/nope":       `<html lang="en" dir="ltr">`,
		"/es/nope":    `<html lang="es" dir="ltr">`,
		"/ar/tts/x":   `<html lang="ar" dir="rtl">`,
		"/ttsx":       `<html lang="en" dir="ltr">`,
		"/payment/xx": `<html lang="en" dir="ltr">`,
	} {
		status, page, _ := getPage(t, app, path)
		if status != 404 || !strings.Contains(page, want) || !strings.Contains(page, `<div id="root">`) {
			t.Errorf("%s: %d %.300s", path, status, page)
		}
		if !strings.Contains(page, `<meta name="robots" content="noindex" />`) || strings.Contains(page, `rel="canonical"`) {
			t.Errorf("%s: a missing page must be noindex and name no canonical address", path)
		}
	}
	if _, page, _ := getPage(t, app, "/es/nope"); !strings.Contains(page, "<title>Página no encontrada · ") {
		t.Errorf("Spanish 404 title: %.400s", page)
	}
	// Real files are still files.
	if status, body, _ := getPage(t, app, "/og.png"); status != 200 || body != "png" {
		t.Errorf("/og.png: %d %q", status, body)
	}
}

func TestNonCanonicalLanguageAddressesRedirect(t *testing.T) {
	app := pagesApp(t, Retention{})
	for from, to := range map[string]string{"/en/tts": "/tts", "/en": "/", "/jp/sst": "/ja/sst", "/en/payment/success?session_id=cs_1": "/payment/success?session_id=cs_1"} {
		if status, _, loc := getPage(t, app, from); status != 301 || loc != to {
			t.Errorf("%s: %d → %q, want 301 → %q", from, status, loc, to)
		}
	}
}

// offSite tells whether a browser could read loc as an address on another site: one
// that starts with two slashes or backslashes (a browser reads \ as /, and drops tabs and
// newlines), names a scheme, or holds anything but a path and a query.
func offSite(loc string) bool {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r == '\\':
			return '/'
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, loc)
	u, err := url.Parse(clean)
	return err != nil || !strings.HasPrefix(clean, "/") || strings.HasPrefix(clean, "//") ||
		u.Scheme != "" || u.Host != "" || clean != loc
}

// The language redirect answers only with paths of this site, whatever the path asked
// for: // and /\ would send the visitor (and, with a cached 301, every later visit) to
// another host.
func TestLanguageRedirectStaysOnTheSite(t *testing.T) {
	app := pagesApp(t, Retention{})
	hostile := []string{
		"/en//evil.example/pay?x=1", `/en/\evil.example/pay`, `/en/\\evil.example`, `/en/\/evil.example`,
		"/en///evil.example", "/en/%2F%2Fevil.example/pay", "/en/%5Cevil.example", "/en/%2f/evil.example",
		"/en/./..//evil.example", "/en/..//evil.example", "/jp//evil.example/pay", `/jp/\evil.example`,
		"/en//evil.example/", "/en/%09/evil.example", "/en/https://evil.example/",
	}
	for _, p := range hostile {
		status, _, loc := getPage(t, app, p)
		if status == 301 && offSite(loc) {
			t.Errorf("%s: 301 → %q, off the site", p, loc)
		}
	}
	// What a raw request line may still carry (tabs, newlines, backslashes, no host):
	// the redirect locate answers is always a path here.
	for _, p := range []string{"/en/\t/evil.example", "/en/\n/evil.example", "/en/\r\n//evil.example",
		"/en/\\\\evil.example", "/en/ //evil.example", "/ja/\t\\evil.example", "/en/\x00//evil.example"} {
		if _, _, redirect := locate(p); redirect != "" && offSite(redirect) {
			t.Errorf("locate(%q) → %q, off the site", p, redirect)
		}
	}
	// Ordinary addresses still go where they went.
	for from, to := range map[string]string{"/en//tts": "/tts", `/en/\tts`: "/tts", "/en/tts/": "/tts"} {
		if status, _, loc := getPage(t, app, from); status != 301 || loc != to {
			t.Errorf("%s: %d → %q, want 301 → %q", from, status, loc, to)
		}
	}
}

// The privacy page states the numbers the order book runs on: change them, and the page
// says so in every language.
func TestPrivacyPageFollowsTheRetentionSettings(t *testing.T) {
	for _, days := range []int{3, 10} {
		app := pagesApp(t, NewRetention(time.Duration(days)*24*time.Hour, 7*time.Hour, 5*time.Hour, 30*time.Minute))
		for _, prefix := range []string{"", "/ja", "/es", "/ru", "/zh", "/ar"} {
			_, page, _ := getPage(t, app, prefix+"/privacy")
			if desc := attr(t, page, `<meta name="description"`); !regexp.MustCompile(`\b` + strconv.Itoa(days) + `\b`).MatchString(desc) {
				t.Errorf("%s/privacy: description %q does not say %d days", prefix, desc, days)
			}
			site := attr(t, page, `<meta name="parla:site"`)
			want := `"retention":{"linkDays":` + strconv.Itoa(days) + `,"uploadHours":7,"unpaidHours":5,"checkoutMins":30}`
			if !strings.Contains(site, want) {
				t.Errorf("%s/privacy: site info %q, want %s", prefix, site, want)
			}
		}
	}
}

// The server's routes are the app's: a page the app shows must not answer 404, and a
// route the app dropped must not answer 200.
func TestServerRoutesAreTheAppRoutes(t *testing.T) {
	src, err := os.ReadFile("../webui/src/App.jsx")
	if err != nil {
		t.Fatal(err)
	}
	app := map[string]bool{}
	// The keys of SCREENS, the app's screen for each route.
	for _, m := range regexp.MustCompile(`(?m)^\s*"(/[^"]*)": \(\) =>`).FindAllStringSubmatch(string(src), -1) {
		app[m[1]] = true
	}
	if len(app) < 5 {
		t.Fatalf("found only %v in App.jsx's SCREENS", app)
	}
	for p := range app {
		if _, ok := sitePages[p]; !ok {
			t.Errorf("the app routes %s, the server answers it 404", p)
		}
	}
	for p := range sitePages {
		if !app[p] {
			t.Errorf("the server serves %s, the app has no such route", p)
		}
	}
}
