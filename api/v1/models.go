package v1

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
)

// model is a name /v1 answers to: one of OpenAI's, or a dated snapshot of one, served by
// the operator's engine for its service. A client pinned to a snapshot gets the same engine
// as the plain name.
type model struct {
	id      string
	service orders.Service // orders.TTS or orders.STT
	created int64          // unix seconds, as OpenAI's model object carries it
	// translates: /v1/audio/translations takes it (OpenAI's takes whisper-1 alone).
	translates bool
}

// models are the names /v1 takes, in the order /v1/models lists them.
var models = []model{
	{id: "tts-1", service: orders.TTS, created: 1699053241},
	{id: "tts-1-hd", service: orders.TTS, created: 1699046015},
	{id: "gpt-4o-mini-tts", service: orders.TTS, created: 1742403959},
	{id: "gpt-4o-mini-tts-2025-03-20", service: orders.TTS, created: 1742403959},
	{id: "gpt-4o-mini-tts-2025-12-15", service: orders.TTS, created: 1765756800},
	{id: "whisper-1", service: orders.STT, created: 1677532384, translates: true},
	{id: "gpt-4o-transcribe", service: orders.STT, created: 1742068463},
	{id: "gpt-4o-mini-transcribe", service: orders.STT, created: 1742068596},
	{id: "gpt-4o-mini-transcribe-2025-03-20", service: orders.STT, created: 1742068596},
	{id: "gpt-4o-mini-transcribe-2025-12-15", service: orders.STT, created: 1765756800},
}

// modelIDs are the names of service's models (translations: those that translate).
func modelIDs(service orders.Service, translate bool) []string {
	var ids []string
	for _, m := range models {
		if m.service == service && (!translate || m.translates) {
			ids = append(ids, m.id)
		}
	}
	return ids
}

// isSpeechModel reports whether id names a speech model (a call's unit is characters).
func isSpeechModel(id string) bool { return slices.Contains(modelIDs(orders.TTS, false), id) }

// unknownModel is the refusal of a model name the service does not take.
func unknownModel(id string, ids []string) *apiError {
	return invalid("model", "model_not_found", "The model "+strconv.Quote(id)+" does not exist here; use one of "+strings.Join(ids, ", ")+".")
}

// modelObject is OpenAI's model object.
func modelObject(m model) fiber.Map {
	return fiber.Map{"id": m.id, "object": "model", "created": m.created, "owned_by": "parla"}
}

// openModels lists the models of the services open now at desk.
func openModels(desk *orders.Desk) []model {
	var out []model
	for _, m := range models {
		if desk.Available(m.service) == nil {
			out = append(out, m)
		}
	}
	return out
}

// listModels is GET /v1/models: the models of the services open now.
func (a *API) listModels(c *fiber.Ctx) error {
	open := openModels(a.deps.Desk)
	data := make([]fiber.Map, len(open))
	for i, m := range open {
		data[i] = modelObject(m)
	}
	return c.JSON(fiber.Map{"object": "list", "data": data})
}

// retrieveModel is GET /v1/models/{id}: the model object, or 404 model_not_found for a
// name this server does not take or whose service is closed.
func (a *API) retrieveModel(c *fiber.Ctx) error {
	id := c.Params("id")
	for _, m := range openModels(a.deps.Desk) {
		if m.id == id {
			return c.JSON(modelObject(m))
		}
	}
	return send(c, &apiError{status: 404, typ: invalidRequest, param: "model", code: "model_not_found",
		message: "The model " + strconv.Quote(id) + " does not exist or is not served here now.", hint: retryNever})
}
