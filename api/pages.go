package api

import (
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"parla/providers/texts"
	"parla/webui"
)

// siteLanguage is an interface language (texts.Language: the table of
// webui/src/languages.json, which the UI reads too) as the server writes it into a page:
// Tag goes into <html lang>, Hreflang is the code of its addresses.
type siteLanguage struct{ texts.Language }

// prefix is the first path segment of the language's addresses: none for English, the
// default, so /tts is the English page and /es/tts the Spanish one.
func (l siteLanguage) prefix() string {
	if l.ID == "en" {
		return ""
	}
	return "/" + l.Hreflang
}

// siteLanguages are the interface languages, English first.
var siteLanguages = func() []siteLanguage {
	var out []siteLanguage
	for _, l := range texts.Languages() {
		out = append(out, siteLanguage{l})
	}
	return out
}()

// sitePage is one route of the app (webui/src/pages.json, which the app's router reads
// too): the locale keys of its title and description; noindex for pages that only make
// sense mid-order; its screen's source module (preloaded: preload.go), "" for one in the
// entry.
type sitePage struct {
	title, description, screen string
	noindex                    bool
}

var sitePages = parseSitePages(webui.Pages)

// parseSitePages reads the shared list of routes; a broken one is a build's mistake,
// caught at start.
func parseSitePages(data []byte) map[string]sitePage {
	var list map[string]struct {
		Title, Description, Screen string
		Noindex                    bool
	}
	if err := json.Unmarshal(data, &list); err != nil || len(list) == 0 {
		panic(fmt.Sprintf("api: webui/src/pages.json: %v (%d pages)", err, len(list)))
	}
	out := make(map[string]sitePage, len(list))
	for path, p := range list {
		out[path] = sitePage{title: p.Title, description: p.Description, screen: p.Screen, noindex: p.Noindex}
	}
	return out
}

var notFoundPage = sitePage{title: "notFound.title", description: "notFound.text", noindex: true}

// Retention is what the privacy page states about keeping and erasing, taken from the
// same settings the order book runs on (orders.Config), so the page cannot drift from
// what the code does.
type Retention struct {
	LinkDays     int `json:"linkDays"`     // the result and its link (LinkTTL)
	UploadHours  int `json:"uploadHours"`  // an upload never paid for (UploadTTL)
	UnpaidHours  int `json:"unpaidHours"`  // an order never paid for, text and address included (UnpaidTTL)
	CheckoutMins int `json:"checkoutMins"` // how long a checkout accepts payment (CheckoutTTL)
}

// NewRetention rounds the order book's durations to the units the page names.
func NewRetention(link, upload, unpaid, checkout time.Duration) Retention {
	return Retention{LinkDays: int(link.Hours() / 24), UploadHours: int(upload.Hours()),
		UnpaidHours: int(unpaid.Hours()), CheckoutMins: int(checkout.Minutes())}
}

// siteInfo is injected into every page (meta name="parla:site") so the footer and the
// privacy page need no second request.
type siteInfo struct {
	Contact   string    `json:"contact"`
	Version   string    `json:"version"`
	Retention Retention `json:"retention"`
}

// pageRenderer writes index.html for one route and language: <html lang dir>, title,
// description, canonical, hreflang alternates and Open Graph, from the UI's own locale
// files, so a crawler without JavaScript sees each page in its language.
type pageRenderer struct {
	base    string                    // PUBLIC_URL without trailing slash
	locales map[string]map[string]any // language id → translation.json
	info    siteInfo
	// preloads name the chunks each page preloads (preload.go); nil: none.
	preloads preloads
}

// newPageRenderer reads <id>/translation.json for every language from locales.
func newPageRenderer(base string, locales fs.FS, info siteInfo) (*pageRenderer, error) {
	r := &pageRenderer{base: strings.TrimRight(base, "/"), locales: map[string]map[string]any{}, info: info}
	for _, l := range siteLanguages {
		data, err := fs.ReadFile(locales, l.ID+"/translation.json")
		if err != nil {
			return nil, fmt.Errorf("reading the %s locale: %w", l.ID, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("parsing the %s locale: %w", l.ID, err)
		}
		r.locales[l.ID] = m
	}
	return r, nil
}

// locate splits a request path into its language and the route inside it. redirect is
// set when the address is not the canonical one (/en/tts → /tts, /jp/tts → /ja/tts), and is
// always a path of this site (sitePath).
func locate(p string) (lang siteLanguage, route, redirect string) {
	p = "/" + strings.Trim(p, "/")
	first, rest, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	rest = "/" + rest
	for _, l := range siteLanguages {
		switch first {
		case l.Hreflang, l.ID:
			if first != l.Hreflang || l.ID == "en" {
				return l, rest, sitePath(l.prefix() + rest)
			}
			return l, rest, ""
		}
	}
	return siteLanguages[0], p, ""
}

// sitePath makes p a path of this site, fit for a Location: a browser reads \ as / and
// drops tabs and newlines, so backslashes become slashes and control characters go, then
// runs of slashes and dot segments fold (path.Clean). What comes out starts with exactly
// one slash, never // or /\, which a browser would take for another host.
func sitePath(p string) string {
	p = strings.Map(func(r rune) rune {
		switch {
		case r == '\\':
			return '/'
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, p)
	return path.Clean("/" + p)
}

// text looks a dotted key up in a language, falling back to English, and fills
// {{name}} placeholders from vars.
func (r *pageRenderer) text(lang, key string, vars map[string]string) string {
	s := lookup(r.locales[lang], key)
	if s == "" {
		s = lookup(r.locales["en"], key)
	}
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return s
}

func lookup(m map[string]any, key string) string {
	var v any = m
	for _, part := range strings.Split(key, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[part]
	}
	s, _ := v.(string)
	return s
}

var (
	htmlTag  = regexp.MustCompile(`<html[^>]*>`)
	titleTag = regexp.MustCompile(`(?s)<title>.*?</title>\s*`)
	descTag  = regexp.MustCompile(`<meta name="description"[^>]*>\s*`)
)

// render fills index for route in lang; found is false for unknown routes, which get the
// not-found title (the app shows its not-found page) and no alternates.
func (r *pageRenderer) render(index []byte, lang siteLanguage, route string) (out []byte, found bool) {
	route = "/" + strings.Trim(route, "/")
	page, found := sitePages[route]
	if !found {
		page = notFoundPage
	}
	return r.renderPage(index, lang, route, page, found), found
}

// renderPage fills index with page's metadata; addresses (canonical, alternates, og:url)
// only for a public route (found; a not-found page, or a private one, names none).
func (r *pageRenderer) renderPage(index []byte, lang siteLanguage, route string, page sitePage, found bool) []byte {
	ret := r.info.Retention
	vars := map[string]string{"linkDays": strconv.Itoa(ret.LinkDays), "uploadHours": strconv.Itoa(ret.UploadHours),
		"unpaidHours": strconv.Itoa(ret.UnpaidHours)}
	title := r.text(lang.ID, "meta.title", nil)
	if page.title != "" {
		title = r.text(lang.ID, page.title, vars) + " · " + title
	}
	desc := r.text(lang.ID, page.description, vars)
	addr := func(l siteLanguage) string {
		if route == "/" && l.prefix() != "" {
			return r.base + l.prefix()
		}
		return r.base + l.prefix() + route
	}
	var b strings.Builder
	attr := html.EscapeString
	fmt.Fprintf(&b, "<title>%s</title>\n", attr(title))
	fmt.Fprintf(&b, "    <meta name=\"description\" content=\"%s\" />\n", attr(desc))
	if page.noindex {
		b.WriteString("    <meta name=\"robots\" content=\"noindex\" />\n")
	}
	if found {
		fmt.Fprintf(&b, "    <link rel=\"canonical\" href=\"%s\" />\n", attr(addr(lang)))
		for _, l := range siteLanguages {
			fmt.Fprintf(&b, "    <link rel=\"alternate\" hreflang=\"%s\" href=\"%s\" />\n", l.Hreflang, attr(addr(l)))
		}
		fmt.Fprintf(&b, "    <link rel=\"alternate\" hreflang=\"x-default\" href=\"%s\" />\n", attr(addr(siteLanguages[0])))
		fmt.Fprintf(&b, "    <meta property=\"og:url\" content=\"%s\" />\n", attr(addr(lang)))
	}
	for _, m := range [][2]string{
		{"og:type", "website"}, {"og:site_name", "Parla"}, {"og:title", title}, {"og:description", desc},
		{"og:locale", lang.OG}, {"og:image", r.base + "/og.png"}, {"og:image:width", "1200"}, {"og:image:height", "630"},
	} {
		fmt.Fprintf(&b, "    <meta property=\"%s\" content=\"%s\" />\n", m[0], attr(m[1]))
	}
	fmt.Fprintf(&b, "    <meta name=\"twitter:card\" content=\"summary_large_image\" />\n")
	r.preloads.links(&b, lang.ID, page.screen)
	info, _ := json.Marshal(r.info)
	fmt.Fprintf(&b, "    <meta name=\"parla:site\" content=\"%s\" />\n  ", attr(string(info)))

	s := string(index)
	dir := "ltr"
	if lang.RTL {
		dir = "rtl"
	}
	s = htmlTag.ReplaceAllLiteralString(s, fmt.Sprintf(`<html lang="%s" dir="%s">`, lang.Tag, dir))
	s = titleTag.ReplaceAllLiteralString(s, "")
	s = descTag.ReplaceAllLiteralString(s, "")
	s = strings.Replace(s, "</head>", b.String()+"</head>", 1)
	return []byte(s)
}
