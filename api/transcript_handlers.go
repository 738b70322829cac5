package api

import (
	"io"
	"os"

	"github.com/gofiber/fiber/v2"

	"parla/api/orders"
)

// uploadAudio streams an audio upload to disk, checks it with ffprobe and ffmpeg and
// answers its server-measured duration and price.
func (s orderHandlers) uploadAudio(c *fiber.Ctx) error {
	book := s.deps.Book
	if err := book.Desk.Available(orders.STT); err != nil {
		return refuseBody(c, err)
	}
	limit := s.cfg.MaxUploadBytes
	if n := c.Request().Header.ContentLength(); n > 0 && int64(n) > limit+multipartSlack {
		return refuseBody(c, tooLarge(limit))
	}
	boundary, err := multipartBoundary(c.Get(fiber.HeaderContentType))
	if err != nil {
		return refuseBody(c, err)
	}
	// A client whose unpaid uploads fill its quota (or everyone's) is refused before its
	// bytes are read; the upload is counted again, with its size, when it is kept.
	client := s.clientOf(c)
	if err := book.Intake.UploadAllowed(c.UserContext(), client); err != nil {
		return refuseBody(c, err)
	}
	f, err := book.Intake.IncomingFile()
	if err != nil {
		return err
	}
	body := io.Reader(&progressDeadline{r: requestBody(c), conn: c.Context().Conn(), idle: uploadIdle})
	name, size, err := receiveFile(body, boundary, limit, f)
	if err == nil {
		// The multipart form ends before a chunked body's last chunk; read that too, so the
		// connection is left at the start of the next request.
		_, err = io.Copy(io.Discard, &cappedReader{r: body, n: multipartSlack})
		if err != nil {
			err = uploadReadError(err, limit)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return refuseBody(c, err)
	}
	// The measure ends when the visitor leaves (the connection is watched: fasthttp has no
	// per-request cancellation), or at its deadline (media.MeasureDeadline) if they stay.
	ctx, stop := watchConn(c.UserContext(), c.Context().Conn())
	u, amount, err := book.Intake.AcceptUpload(ctx, f.Name(), name, client, size)
	if stop() {
		c.Context().SetConnectionClose()
	}
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "file": fiber.Map{"filename": u.FileName, "path": u.ID},
		"duration": orders.Seconds(u.Duration), "speechSeconds": orders.Seconds(u.Speech),
		"amount": amount, "currency": book.Config().Pricing.Currency})
}

type transcriptOrder struct {
	Format      string `json:"response_format"`
	Language    string `json:"language"`
	Email       string `json:"email"`
	EmailVerify string `json:"emailVerify"`
	Locale      string `json:"locale"`
	Translate   bool   `json:"translate"`
	Key         string `json:"key"` // the page's order key: one key, one payment
}

type sttCheckoutBody struct {
	Order struct {
		transcriptOrder
		FilePath string `json:"filePath"`
		FileName string `json:"fileName"`
	} `json:"order"`
	Products []lineItem `json:"products"`
}

type vttCheckoutBody struct {
	Order struct {
		transcriptOrder
		OutputFormat string `json:"outputFormat"`
		SelectedFile string `json:"selectedFile"`
	} `json:"order"`
	Products []lineItem `json:"products"`
}

func (s orderHandlers) createSTTCheckout(c *fiber.Ctx) error {
	var body sttCheckoutBody
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	req, err := transcriptRequest(body.Order.transcriptOrder, body.Products)
	if err != nil {
		return err
	}
	req.Upload = body.Order.FilePath
	co, err := s.deps.Book.Desk.CreateSTT(c.UserContext(), req)
	return s.checkoutAnswer(c, co, err)
}

func (s orderHandlers) createVTTCheckout(c *fiber.Ctx) error {
	var body vttCheckoutBody
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	o := body.Order.transcriptOrder
	if o.Format == "" {
		o.Format = body.Order.OutputFormat
	}
	req, err := transcriptRequest(o, body.Products)
	if err != nil {
		return err
	}
	req.Link = body.Order.SelectedFile
	req.Client = s.clientOf(c)
	co, err := s.deps.Book.Desk.CreateVTT(c.UserContext(), req)
	return s.checkoutAnswer(c, co, err)
}

func transcriptRequest(o transcriptOrder, products []lineItem) (orders.TranscriptRequest, error) {
	amount, currency, err := clientTotal(products)
	return orders.TranscriptRequest{Format: o.Format, Language: o.Language, Email: o.Email,
		EmailVerify: o.EmailVerify, Locale: o.Locale, Key: o.Key, Translate: o.Translate, ClientAmount: amount, ClientCurrency: currency}, err
}

func (s orderHandlers) analyzeVideo(c *fiber.Ctx) error {
	var body struct {
		Video string `json:"video"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	// The analysis ends when the visitor leaves, as an upload's measure does.
	ctx, stop := watchConn(c.UserContext(), c.Context().Conn())
	info, amount, err := s.deps.Book.Intake.AnalyzeLink(ctx, s.clientOf(c), body.Video)
	if stop() {
		c.Context().SetConnectionClose()
	}
	if err != nil {
		return err
	}
	secs := orders.Seconds(info.Duration)
	answer := fiber.Map{"ok": true, "durationMinutes": secs / 60, "durationSeconds": secs % 60,
		"totalMinutes": float64(secs) / 60, "duration": secs, "amount": amount,
		"currency": s.deps.Book.Config().Pricing.Currency}
	if info.Title != "" {
		answer["title"] = info.Title
	}
	if info.SpeechMeasured {
		answer["speechSeconds"] = orders.Seconds(info.Speech)
	}
	return c.JSON(answer)
}
