package main

import (
	"io/fs"
	"strings"
	"testing"

	"parla/providers/testkit"
	"parla/webui"
)

// TestServedPagesAreInTheirLanguage asks the real app, over plain HTTP as a crawler would
// (no JavaScript), for pages in several languages, an unknown route, and the privacy page
// with a changed retention setting.
func TestServedPagesAreInTheirLanguage(t *testing.T) {
	if _, err := fs.Stat(webui.Dist, "dist/index.html"); err != nil {
		testkit.Missing(t, "the web UI is not built (make ui)")
	}
	h := startApp(t, map[string]string{"UPLOAD_TTL": "7h", "CONTACT_EMAIL": "help@parla.example"})
	base := h.base
	cases := []struct{ path, want string }{
		{"/es/tts", `<html lang="es" dir="ltr">`},
		{"/es/tts", `<title>Texto a voz · Parla: texto a voz y transcripción de pago por uso</title>`},
		{"/es/tts", `<link rel="canonical" href="` + base + `/es/tts" />`},
		{"/es/tts", `<link rel="alternate" hreflang="ja" href="` + base + `/ja/tts" />`},
		{"/es/tts", `<link rel="alternate" hreflang="x-default" href="` + base + `/tts" />`},
		{"/es/tts", `<meta property="og:url" content="` + base + `/es/tts" />`},
		{"/es/tts", `<meta property="og:image" content="` + base + `/og.png" />`},
		{"/ar/refunds", `<html lang="ar" dir="rtl">`},
		{"/ar/refunds", `<title>سياسة الاسترداد · `},
		{"/tts", `<link rel="alternate" hreflang="es" href="` + base + `/es/tts" />`},
		{"/", `&#34;contact&#34;:&#34;help@parla.example&#34;`},
		{"/privacy", `&#34;uploadHours&#34;:7`},
	}
	for _, c := range cases {
		r := h.get(c.path)
		if r.status != 200 || !strings.Contains(string(r.body), c.want) {
			t.Errorf("GET %s: %d, lacks %s in\n%.1500s", c.path, r.status, c.want, r.body)
		}
	}
	for _, p := range []string{"/nope", "/es/nope", "/tts/extra"} {
		if r := h.get(p); r.status != 404 || !strings.Contains(string(r.body), `<div id="root">`) {
			t.Errorf("GET %s: %d, want 404 with the app's not-found page", p, r.status)
		}
	}
	if r := h.get("/og.png"); r.status != 200 || r.header.Get("Content-Type") != "image/png" || len(r.body) < 1000 {
		t.Errorf("/og.png: %d %s %d bytes", r.status, r.header.Get("Content-Type"), len(r.body))
	}
	ret, _ := h.get("/api/config").json(t)["retention"].(map[string]any)
	if ret["uploadHours"] != float64(7) || ret["linkDays"] != float64(10) {
		t.Errorf("/api/config retention = %v", ret)
	}
}
