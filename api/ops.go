package api

import (
	"github.com/gofiber/fiber/v2"
)

// ready answers /readyz: 200 {"ok":true,"checks":{…}} when this node can serve, else 503
// with the failed checks named. Load balancers and `parla healthcheck` ask it. Why a check
// failed (paths, hosts) and the checks' details (the whisper device) are told only to the
// operator's token.
func (s *server) ready(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	if s.deps.Ready == nil {
		return c.JSON(fiber.Map{"ok": true, "checks": fiber.Map{}})
	}
	r := s.deps.Ready(c.UserContext())
	if s.deps.Authorized == nil || !s.deps.Authorized(c) {
		for name, res := range r.Checks {
			res.Error, res.Detail = "", ""
			r.Checks[name] = res
		}
	}
	if !r.OK {
		c.Status(fiber.StatusServiceUnavailable)
	}
	return c.JSON(r)
}

// metrics serves /metrics to the operator (Authorization: Bearer <ADMIN_TOKEN>); it is
// not found when the metrics live on their own address (METRICS_ADDR).
func (s *server) metrics(c *fiber.Ctx) error {
	if s.deps.Metrics == nil {
		return notFound(c)
	}
	if s.deps.Authorized == nil || !s.deps.Authorized(c) {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="parla"`)
		return fail("unauthorized", "")
	}
	return s.deps.Metrics(c)
}
