package api

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"mime"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// spa serves the built React app: real files as they are (hashed assets cached for
// good), and index.html for every other GET so that client routes such as
// /payment/success load the app; that index.html is rendered per route and language
// (pages.go), with a 404 status for routes the app does not know.
func (s *server) spa(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead {
		return notFound(c)
	}
	if s.deps.UI == nil {
		return c.Status(fiber.StatusNotFound).SendString("The web interface is not built (run make ui).")
	}
	name := strings.TrimPrefix(path.Clean("/"+c.Path()), "/")
	if name != "" && name != "index.html" {
		if data, err := fs.ReadFile(s.deps.UI, name); err == nil {
			if strings.HasPrefix(name, "assets/") {
				c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
			}
			if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
				c.Set(fiber.HeaderContentType, ct)
			}
			return c.Send(data)
		}
		if path.Ext(name) != "" && strings.HasPrefix(name, "assets/") {
			return notFound(c)
		}
	}
	index, err := fs.ReadFile(s.deps.UI, "index.html")
	if err != nil {
		return c.Status(fiber.StatusNotFound).SendString("The web interface is not built (run make ui).")
	}
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Type("html", "utf-8")
	if s.pages == nil {
		return c.Send(s.withConfig(index))
	}
	lang, route, redirect := locate(c.Path())
	if redirect != "" {
		if q := string(c.Request().URI().QueryString()); q != "" {
			redirect += "?" + q
		}
		return c.Redirect(redirect, fiber.StatusMovedPermanently)
	}
	page, found := s.pages.render(index, lang, route)
	if !found {
		// The app's own not-found page, in the language, with the status a crawler believes.
		c.Status(fiber.StatusNotFound)
	}
	c.Set(fiber.HeaderContentLanguage, lang.Hreflang)
	c.Vary("Accept-Encoding")
	return c.Send(s.withConfig(page))
}

// withConfig is writeConfig with GET /api/config's object; a server without an order book
// (the pages' own tests) writes none.
func (s *server) withConfig(index []byte) []byte {
	if s.deps.Book == nil {
		return index
	}
	return writeConfig(index, s.configData())
}

// writeConfig writes config (GET /api/config's object) into index as a JSON script element
// the app reads before its first paint (webui/src/config.jsx), instead of asking for it
// after: the page's shape (the open services, the forms) is there from the start, with no
// layout shift when it arrives. json.Marshal escapes <, > and &, so no text in it can end
// the element. Without a </head>, or when config cannot be written, index is left as it is.
func writeConfig(index []byte, config any) []byte {
	data, err := json.Marshal(config)
	at := bytes.Index(index, []byte("</head>"))
	if err != nil || at < 0 {
		return index
	}
	out := make([]byte, 0, len(index)+len(data)+64)
	out = append(out, index[:at]...)
	out = append(out, `<script type="application/json" id="parla-config">`...)
	out = append(out, data...)
	out = append(out, "</script>\n  "...)
	return append(out, index[at:]...)
}
