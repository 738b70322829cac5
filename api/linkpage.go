package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
	"parla/providers"
	"parla/providers/mail"
	"parla/providers/texts"
)

// The link page (/r/{token}) is the address a delivery letter gives. Company mail scanners
// open every link of a letter: here a GET only shows what the file is, when it expires,
// and buttons; downloading (POST /d/{token}, or GET /d/{token} from the app), the other
// formats and "delete now" are form posts a scanner does not make. It is rendered on the
// server in the order's language, so it needs no script; a small one only ticks the
// countdown.

// linkPage shows a delivered order's page, or the 404/410 page of an unknown or lapsed link.
func (s linkHandlers) linkPage(c *fiber.Ctx) error {
	o, err := s.deps.Book.Download(c.UserContext(), c.Params("token"))
	if err != nil {
		return s.linkError(c, o, err)
	}
	return s.renderLinkPage(c, o, "")
}

// eraseNow deletes the result and what is kept with it, at the visitor's request: the
// page's button leads to a confirmation, whose own form (confirm=yes) erases. Only a form
// posted by the page itself is obeyed (see sameOrigin): another site cannot make a
// visitor's browser delete their file.
func (s linkHandlers) eraseNow(c *fiber.Ctx) error {
	ctx := c.UserContext()
	o, err := s.deps.Book.Download(ctx, c.Params("token"))
	if err != nil {
		return s.linkError(c, o, err)
	}
	if !sameOrigin(c, s.cfg.PublicURL) {
		lng := pageLocale(c, o.Locale)
		return s.sendPage(c, fiber.StatusForbidden, pageView{Lang: lng, Title: pageText(lng, "crosssite.title"),
			Notice: pageText(lng, "crosssite.body")})
	}
	lng := pageLocale(c, o.Locale)
	if c.FormValue("confirm") != "yes" {
		// The page's button asks first; only the confirmation's own form says yes.
		return s.sendPage(c, fiber.StatusOK, pageView{Lang: lng, Title: pageText(lng, "confirm.title"),
			Token: o.LinkToken, Confirm: true})
	}
	if err := s.deps.Book.Results.Erase(ctx, o); err != nil {
		return err
	}
	return s.sendPage(c, fiber.StatusOK, pageView{Lang: lng, Title: pageText(lng, "deleted.title"),
		Notice: pageText(lng, "deleted.body"), Done: true})
}

// sameOrigin accepts a POST that the browser says came from this site: Sec-Fetch-Site
// same-origin, or, from a browser without it, an Origin naming exactly the scheme, host and
// port of public (PUBLIC_URL; the address the request was made to when empty): an http page
// of an https site, or another port, is another origin. A request with neither (not a
// browser form) is refused too.
func sameOrigin(c *fiber.Ctx, public string) bool {
	if site := c.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	if public == "" {
		public = c.BaseURL()
	}
	origin, ok := originOf(c.Get(fiber.HeaderOrigin))
	want, known := originOf(public)
	return ok && known && origin == want
}

// originOf is a URL's origin as scheme://host:port, lower case and with the scheme's
// default port written out, so that equal origins compare equal; ok is false for "null",
// an empty or a relative address.
func originOf(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

// linkError answers an unknown (404) or lapsed (410) link: a page in the visitor's
// language for a browser, today's JSON error for anyone else.
func (s *server) linkError(c *fiber.Ctx, o orders.Order, err error) error {
	var status int
	var key string
	switch {
	case errors.Is(err, orders.ErrNotFound):
		status, key, err = fiber.StatusNotFound, "notfound", fail("not_found", "no such download")
	case errors.Is(err, orders.ErrLinkExpired):
		status, key = fiber.StatusGone, "expired"
	default:
		return err
	}
	if !wantsHTML(c) {
		return err
	}
	lng := pageLocale(c, o.Locale)
	return s.sendPage(c, status, pageView{Lang: lng, Title: pageText(lng, key+".title"), Notice: pageText(lng, key+".body")})
}

// wantsHTML tells a browser's navigation (Accept: text/html…) from an API client.
func wantsHTML(c *fiber.Ctx) bool {
	return strings.Contains(c.Get(fiber.HeaderAccept), "text/html")
}

// pageLocale is the language of a page: ?lang= when given, else the order's, else the
// first of the browser's languages that Parla speaks, else English.
func pageLocale(c *fiber.Ctx, orderLocale string) string {
	if l := c.Query("lang"); l != "" {
		return texts.Locale(l)
	}
	if orderLocale != "" {
		return texts.Locale(orderLocale)
	}
	for _, part := range strings.Split(c.Get(fiber.HeaderAcceptLanguage), ",") {
		tag := strings.TrimSpace(strings.SplitN(part, ";", 2)[0])
		if tag == "" || tag == "*" {
			continue
		}
		if l := texts.Locale(tag); l != "en" || strings.HasPrefix(strings.ToLower(tag), "en") {
			return l
		}
	}
	return "en"
}

// renderLinkPage shows a delivered order: what it is, its expiry with a countdown, the
// download, the other formats of a transcript, and "delete now".
func (s linkHandlers) renderLinkPage(c *fiber.Ctx, o orders.Order, notice string) error {
	lng := pageLocale(c, o.Locale)
	k, err := s.deps.Book.Results.Kept(c.UserContext(), o)
	if err != nil {
		s.log.Warn("reading what is kept", "order", o.ID, "err", err)
	}
	tr := texts.In(lng)
	service := tr.Get("service." + string(o.Service))
	p := mail.Purchase{Format: k.Format, Voice: k.Voice, Characters: k.Characters, Seconds: k.Seconds,
		Amount: o.Amount, Currency: o.Currency}
	v := pageView{Lang: lng, Title: pageText(lng, "page.title"), Notice: notice,
		What: mail.ReceiptLines(lng, service, p), File: o.ResultName,
		Expiry:    strings.ReplaceAll(tr.Get("delivered.expiry"), "{date}", mail.FormatDate(lng, o.LinkExpiresAt)),
		ExpiresAt: o.LinkExpiresAt.UTC().Format(time.RFC3339), Left: timeLeft(lng, o.LinkExpiresAt.Sub(s.deps.Book.Config().Now())),
		LeftFormat: pageText(lng, "page.left"), Units: countdownUnits(tr), Token: o.LinkToken}
	if k.Transcript != nil {
		for _, f := range providers.TranscriptFormats {
			if f != k.Format {
				v.Formats = append(v.Formats, pageFormat{Name: f, Label: mail.FormatName(f)})
			}
		}
		v.Edit = editAddress(lng, o.LinkToken)
	}
	return s.sendPage(c, fiber.StatusOK, v)
}

// timeLeft writes a countdown (days, hours, minutes) in the locale's units, each in the
// plural form its number takes (9 أيام, 11 يومًا).
func timeLeft(lng string, d time.Duration) string {
	if d < 0 {
		d = 0
	}
	mins := int64(d / time.Minute)
	tr := texts.In(lng)
	return strings.NewReplacer("{d}", tr.Count("page.days", mins/(24*60)),
		"{h}", tr.Count("page.hours", mins/60%24), "{m}", tr.Count("page.minutes", mins%60)).Replace(tr.Get("page.left"))
}

// countdownUnits are the countdown's units in every plural form of the language, as JSON
// for the script, which picks the form with the browser's Intl.PluralRules (the same CLDR
// rules as texts.PluralCategory).
func countdownUnits(tr texts.Lang) string {
	b, _ := json.Marshal(map[string]map[string]string{"d": tr.Forms("page.days"), "h": tr.Forms("page.hours"),
		"m": tr.Forms("page.minutes")})
	return string(b)
}

// pageView is one link page (or its 404/410/403 form, which has only Title and Notice).
type pageView struct {
	Lang       string
	Title      string
	Notice     string
	Done       bool     // the result was just erased
	What       []string // the receipt lines
	File       string
	Expiry     string
	ExpiresAt  string // RFC 3339, for the countdown script
	Left       string
	LeftFormat string
	Units      string // countdownUnits
	Token      string
	Confirm    bool   // the step before "delete now" erases
	Home       string // the site's home in the page's language (/, /es…)
	Formats    []pageFormat
	Edit       string                  // the transcript editor's address (editor.go); "" for speech
	Tag, Dir   string                  // html lang and dir, from Lang
	T          func(key string) string // the page's texts in its language
	Script     template.JS
}

type pageFormat struct{ Name, Label string }

func (s *server) sendPage(c *fiber.Ctx, status int, v pageView) error {
	tr := texts.In(v.Lang)
	v.Tag, v.Dir, v.T, v.Home = tr.Tag(), tr.Dir(), tr.Get, homeOf(tr.Code())
	v.Script = countdownScript
	var b bytes.Buffer
	if err := linkPageTemplate.Execute(&b, v); err != nil {
		return err
	}
	// The address holds the token: no caching, no referrer, no index.
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set("X-Robots-Tag", "noindex")
	c.Set(fiber.HeaderContentSecurityPolicy, pagePolicy)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).Send(b.Bytes())
}

func pageText(lng, key string) string { return texts.In(lng).Get(key) }

// homeOf is the site's address prefix in the interface language id: "" for English, /es,
// /ja… (the SPA's own addresses, api/pages.go).
func homeOf(id string) string {
	for _, l := range siteLanguages {
		if l.ID == id {
			return l.prefix()
		}
	}
	return ""
}

// countdownScript ticks the countdown; the page's Content-Security-Policy allows it by its
// hash and no other script.
const countdownScript = `(function(){var t=document.querySelector('[data-testid=link-left]');if(!t)return;var end=Date.parse(t.getAttribute('datetime')),f=t.getAttribute('data-format'),u=JSON.parse(t.getAttribute('data-units')),pr=new Intl.PluralRules(document.documentElement.lang);
function n(k,v){var forms=u[k];return (forms[pr.select(v)]||forms.other).replace('{n}',v);}
function tick(){var m=Math.max(0,Math.floor((end-Date.now())/60000));t.textContent=f.replace('{d}',n('d',Math.floor(m/1440))).replace('{h}',n('h',Math.floor(m/60)%24)).replace('{m}',n('m',m%60));}
tick();setInterval(tick,30000);t.setAttribute('data-ticking','');})();`

// pagePolicy lets the page use its inline style and its one script, load nothing else,
// and not be framed (a framed "delete now" could be clicked through a disguise).
var pagePolicy = func() string {
	sum := sha256.Sum256([]byte(countdownScript))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; frame-ancestors 'none'"
}()

var linkPageTemplate = template.Must(template.New("link").Parse(`<!DOCTYPE html>
<html lang="{{.Tag}}" dir="{{.Dir}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}} · Parla</title>
<style>
:root{--fg:#1b1f24;--muted:#57606a;--bg:#f6f8fa;--card:#fff;--line:#d0d7de;--accent:#1f4e79;--accent-fg:#fff;--danger:#b3261e;--focus:#0b62d6;--radius:10px}
body{margin:0;background:var(--bg);color:var(--fg);font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans','Noto Sans Arabic','Noto Sans CJK SC',sans-serif;line-height:1.5;display:flex;flex-direction:column;min-height:100vh}
*{box-sizing:border-box}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.site-header{padding:1rem 1.25rem;background:var(--accent);color:var(--accent-fg)}
.brand-title{color:inherit;text-decoration:none;font-size:1.6rem;font-weight:700}
.slogan{margin:0;opacity:.9}
main{flex:1;width:calc(100% - 1rem);max-width:40rem;margin:1.5rem auto;padding:1.25rem;background:var(--card);border:1px solid var(--line);border-radius:var(--radius);overflow-wrap:break-word}
h1{font-size:1.6rem;margin:0 0 1rem}
h1,h2{overflow-wrap:anywhere}
h2{font-size:1.15rem}
ul{padding-inline-start:1.25rem}
button{font:inherit;cursor:pointer;border-radius:8px;padding:.55rem 1.1rem;border:1px solid var(--accent)}
.primary{background:var(--accent);color:var(--accent-fg);font-weight:600}
.secondary{background:var(--card);color:var(--accent)}
.danger{background:var(--card);color:var(--danger);border-color:var(--danger)}
.formats{display:flex;flex-wrap:wrap;gap:.5rem;list-style:none;padding:0}
section{margin-block:1.5rem}
.notice{padding:.75rem 1rem;background:#ecfdf5;border-inline-start:4px solid #059669}
.small{font-size:.9rem;color:var(--muted)}
.site-footer{display:flex;flex-wrap:wrap;gap:.5rem 1rem;justify-content:center;padding:1rem;border-top:1px solid var(--line);color:var(--muted);font-size:.9rem}
</style>
</head>
<body>
<header class="site-header">
<a class="brand-title" href="{{.Home}}/">Parla</a>
<p class="slogan">{{call .T "site.slogan"}}</p>
</header>
<main>
<h1>{{.Title}}</h1>
{{- if .Notice}}
<p class="notice" role="status" data-testid="link-notice">{{.Notice}}</p>
{{- end}}
{{- if .Confirm}}
<p>{{call .T "page.delete_note"}}</p>
<form method="post" action="/r/{{.Token}}/delete">
<input type="hidden" name="confirm" value="yes">
<button class="danger" type="submit" data-testid="link-delete-confirm">{{call .T "confirm.yes"}}</button>
</form>
<p><a href="/r/{{.Token}}" data-testid="link-keep">{{call .T "confirm.keep"}}</a></p>
{{- else if .Token}}
<section aria-labelledby="what">
<h2 id="what">{{call .T "page.what"}}</h2>
<ul data-testid="link-what">{{range .What}}<li>{{.}}</li>{{end}}</ul>
<p class="small" dir="ltr">{{.File}}</p>
</section>
<section aria-labelledby="when">
<h2 id="when">{{call .T "page.when"}}</h2>
<p>{{.Expiry}}</p>
<p>{{call .T "page.left_label"}} <time data-testid="link-left" datetime="{{.ExpiresAt}}" data-format="{{.LeftFormat}}" data-units="{{.Units}}">{{.Left}}</time></p>
</section>
<form method="post" action="/d/{{.Token}}">
<button class="primary" type="submit" data-testid="link-download">{{call .T "page.download"}}</button>
</form>
{{- if .Formats}}
<section aria-labelledby="formats">
<h2 id="formats">{{call .T "page.formats"}}</h2>
<p class="small">{{call .T "page.formats_note"}}</p>
<ul class="formats">{{range .Formats}}<li><form method="post" action="/d/{{$.Token}}"><input type="hidden" name="format" value="{{.Name}}"><button class="secondary" type="submit" data-format="{{.Name}}">{{.Label}}</button></form></li>{{end}}</ul>
</section>
{{- end}}
{{- if .Edit}}
<section aria-labelledby="edit">
<h2 id="edit">{{call .T "page.edit_title"}}</h2>
<p class="small">{{call .T "page.edit_note"}}</p>
<p><a href="{{.Edit}}" data-testid="link-edit">{{call .T "page.edit"}}</a></p>
</section>
{{- end}}
<section aria-labelledby="delete">
<h2 id="delete">{{call .T "page.delete_title"}}</h2>
<p class="small">{{call .T "page.delete_note"}}</p>
<form method="post" action="/r/{{.Token}}/delete">
<button class="danger" type="submit" data-testid="link-delete">{{call .T "page.delete"}}</button>
</form>
</section>
<script>{{.Script}}</script>
{{- end}}
<p><a href="{{.Home}}/">{{call .T "page.home"}}</a></p>
</main>
<footer class="site-footer" role="group" aria-label="{{call .T "site.legal"}}">
<a href="{{.Home}}/terms">{{call .T "site.terms"}}</a>
<a href="{{.Home}}/privacy">{{call .T "site.privacy"}}</a>
<a href="{{.Home}}/refunds">{{call .T "site.refunds"}}</a>
</footer>
</body>
</html>
`))
