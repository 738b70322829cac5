package api

import (
	"io/fs"
	"mime"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// spa serves the built React app: real files as they are (hashed assets cached for
// good), and index.html for every other GET so that client routes such as
// /payment/success load the app.
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
	return c.Send(index)
}
