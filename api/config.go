package api

import (
	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
	"parla/providers"
)

// acceptedAudio are the formats the audio page names (the spec's "Business constants and limits"); the server reads
// anything ffmpeg reads and judges files by their content, not their names.
var acceptedAudio = []string{"mp3", "mp4", "mpeg", "mpga", "m4a", "wav", "webm"}

// publicConfig tells the UI everything it shows that the server decides: prices, limits,
// voices, formats, which services are open and how payment works. Every page carries the
// same object too (spa.go), so the app's first paint already has its shape.
func (s *server) publicConfig(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-cache")
	return c.JSON(s.configData())
}

// configData is GET /api/config's object.
func (s *server) configData() fiber.Map {
	bc := s.deps.Book.Config()
	// price publishes a service's whole rule in the one shape the UI's priceCents reads
	// ({unitAmount, per, rounding, minAmount}), plus its unit under the older name
	// (unitChars for tts, perSeconds for sst and vtt) for clients that still read it.
	price := func(svc orders.Service, legacyPer string) fiber.Map {
		r := bc.Pricing.Rules[svc]
		return fiber.Map{"unitAmount": r.UnitAmount, "per": r.Per, "rounding": r.Rounding, "minAmount": r.MinAmount, legacyPer: r.Per}
	}
	services := fiber.Map{}
	for _, svc := range []orders.Service{orders.TTS, orders.STT, orders.VTT} {
		if err := s.deps.Book.Desk.Available(svc); err != nil {
			services[string(svc)] = fiber.Map{"open": false, "reason": "engine_unavailable"}
		} else {
			services[string(svc)] = fiber.Map{"open": true}
		}
	}
	translates := s.deps.Book.Desk.Translates() == nil
	tts := fiber.Map{
		"voices": bc.TTS.Voices, "defaultVoice": bc.TTS.Voices[0],
		"formats": bc.TTS.Formats, "defaultFormat": bc.TTS.Formats[0],
		"speed":    fiber.Map{"min": bc.TTS.MinSpeed, "max": bc.TTS.MaxSpeed, "step": 0.01, "default": 1},
		"maxChars": bc.TTS.MaxChars,
		"price":    price(orders.TTS, "unitChars"),
		// The configured engine's own languages; empty when it names none.
		"languages": nonNil(s.deps.Book.Desk.Readers.Languages()),
	}
	// Several engines (TTS_ENGINE=openai,espeak): which reads which languages now.
	if readers := s.deps.Book.Desk.Readers.All(); readers != nil {
		tts["engines"] = readers
	}
	previews := s.deps.Book.Previews
	return fiber.Map{
		"version":      s.cfg.Version,
		"contactEmail": s.cfg.ContactEmail,
		"currency":     bc.Pricing.Currency,
		"linkDays":     int(bc.LinkTTL.Hours() / 24),
		// What the privacy page states, from the settings the order book runs on.
		"retention": NewRetention(bc.LinkTTL, bc.UploadTTL, bc.UnpaidTTL, bc.CheckoutTTL),
		"payment":   fiber.Map{"mode": s.cfg.PaymentMode, "publishableKey": s.cfg.PublishableKey},
		"services":  services,
		"tts":       tts,
		// The free preview of a recording's first seconds (/services/sst|vtt/preview).
		"preview": fiber.Map{"seconds": int(previews.Length().Seconds()),
			"enabled": previews.Open(orders.STT) == nil || previews.Open(orders.VTT) == nil},
		// translate: whether an English translation can be ordered from the engine.
		"sst": fiber.Map{"formats": providers.TranscriptFormats, "translate": translates, "maxUploadBytes": s.cfg.MaxUploadBytes,
			"maxSeconds": int64(bc.STTMaxDuration.Seconds()), "acceptedFormats": acceptedAudio, "engine": s.cfg.STTEngine, "languages": orders.TranscriptLanguages,
			"price": price(orders.STT, "perSeconds")},
		"vtt": fiber.Map{"formats": providers.TranscriptFormats, "maxSeconds": int64(bc.VTTMaxDuration.Seconds()),
			"engine": s.cfg.STTEngine, "languages": orders.TranscriptLanguages, "translate": translates,
			"price": price(orders.VTT, "perSeconds")},
	}
}

// nonNil keeps an empty list a JSON array.
func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
