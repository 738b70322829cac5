package api

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
)

// previewAnswerWait is how long a preview's request waits for its answer before it is
// told 202 and asks again: long enough that most previews answer on the first request.
const previewAnswerWait = 10 * time.Second

// sttPreview transcribes the first seconds of an upload before payment.
func (s orderHandlers) sttPreview(c *fiber.Ctx) error {
	var body struct {
		FilePath string `json:"filePath"`
		Language string `json:"language"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	return s.transcriptPreview(c, orders.PreviewAsk{Service: orders.STT, Upload: body.FilePath, Language: body.Language})
}

// vttPreview transcribes the first seconds of a video link before payment.
func (s orderHandlers) vttPreview(c *fiber.Ctx) error {
	var body struct {
		Video    string `json:"video"`
		Language string `json:"language"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	return s.transcriptPreview(c, orders.PreviewAsk{Service: orders.VTT, Link: body.Video, Language: body.Language})
}

// transcriptPreview answers a preview: 200 with its text, or 202 while it is made (the
// page asks again; asking again never makes a second one).
func (s orderHandlers) transcriptPreview(c *fiber.Ctx, ask orders.PreviewAsk) error {
	ask.Client = s.clientOf(c)
	// The wait ends when the visitor leaves; the preview is made all the same.
	ctx, stop := watchConn(c.UserContext(), c.Context().Conn())
	p, err := s.deps.Book.Previews.Preview(ctx, ask, previewAnswerWait)
	if stop() {
		c.Context().SetConnectionClose()
	}
	var spent *orders.PreviewBudgetError
	switch {
	case errors.Is(err, orders.ErrPreviewPending):
		c.Set(fiber.HeaderRetryAfter, "1")
		return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"ok": true, "pending": true})
	case errors.As(err, &spent):
		minutes := int(math.Ceil(spent.Wait.Minutes()))
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(spent.Wait.Seconds()))))
		return fail("preview_budget_spent", "this address has had this hour's free previews; you can still order, and previews are free again in "+
			strconv.Itoa(minutes)+" min")
	case err != nil:
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "data": fiber.Map{"text": p.Text, "language": p.Language,
		"seconds": orders.Seconds(p.Length), "speech": p.Speech}})
}
