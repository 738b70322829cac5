package v1

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
	"parla/api/orders"
	"parla/providers"
	"parla/providers/transcript"
)

// transcriptionForm is OpenAI's transcription request, read from its multipart form.
type transcriptionForm struct {
	model, language, prompt, format string
	temperature                     string // as sent; checked by checkForm
	stream                          string // "true" for server-sent events; checked by checkForm
	granularities                   []string
	file                            string // the received file's path
	fileHash                        string // its SHA-256, for the Idempotency-Key's fingerprint
}

// fieldLimit bounds a form field that is not the file.
const fieldLimit = 64 << 10

// uploadIdle is how long an upload may send nothing before it is cut (as the site's).
const uploadIdle = 30 * time.Second

// transcribe is POST /v1/audio/transcriptions (or translations): the file streamed to
// disk, measured as the site measures uploads, charged per millisecond, transcribed by
// the site's engine and rendered in OpenAI's shapes.
func (a *API) transcribe(translate bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := a.deps.Desk.Available(orders.STT); err != nil {
			return refuse(c, a.fail(c, err, ""))
		}
		if translate && a.deps.Desk.Translates() != nil {
			return refuse(c, send(c, invalid("model", "translation_unavailable", "This server's engine does not translate; use /v1/audio/transcriptions.")))
		}
		form, err := a.receive(c)
		if form.file != "" {
			defer os.Remove(form.file)
		}
		if err != nil {
			return refuse(c, a.fail(c, err, ""))
		}
		if err := checkForm(&form, translate); err != nil {
			return a.fail(c, err, "")
		}
		m, err := a.measures.file(c, form.file, a.deps.Intake)
		if silent(err) {
			// OpenAI answers silence with an empty text; push-to-talk and VAD clips make such
			// files all day. Nothing was transcribed, so nothing is charged.
			return a.sendTranscript(c, form, providers.Transcript{Language: form.language, Duration: m.Length, Translated: translate}, m.Length)
		}
		if err != nil {
			return a.fail(c, err, "file")
		}
		ms := m.Length.Milliseconds()
		call := credit.Call{Model: form.model, Units: ms, Amount: a.deps.Pricing.Rules[orders.STT].MilliAmount(ms, 1000),
			Fingerprint: fingerprint("transcription", strconv.FormatBool(translate), form.model, form.language, form.format,
				strings.Join(form.granularities, ","), form.fileHash, form.prompt, form.temperature)}
		req := providers.TranscribeRequest{Path: form.file, Language: form.language, Translate: translate,
			Duration: m.Length, Prompt: form.prompt, Temperature: temperature(form.temperature)}
		if form.stream == "true" {
			return a.stream(c, call, a.transcriptEvents(req, m.Length))
		}
		return a.charge(c, call, func(ctx context.Context) (result, error) {
			t, err := a.deps.Transcriber.Transcribe(ctx, req)
			if err != nil {
				return result{}, err
			}
			return rendered(t, form, m.Length)
		})
	}
}

// rendered is a transcript in the form's format, with OpenAI's usage in json and
// verbose_json.
func rendered(t providers.Transcript, form transcriptionForm, length time.Duration) (result, error) {
	body, err := transcript.Render(t, form.format)
	if err != nil {
		return result{}, err
	}
	_, ctype, _ := transcript.Info(form.format)
	return result{withUsage(body, form, length), ctype}, nil
}

// sendTranscript answers a transcript charged nothing.
func (a *API) sendTranscript(c *fiber.Ctx, form transcriptionForm, t providers.Transcript, length time.Duration) error {
	var out result
	var err error
	if form.stream == "true" {
		var done bytes.Buffer
		err = event(&done, textDone(t.Text, length))
		out = result{done.Bytes(), eventStream}
	} else {
		out, err = rendered(t, form, length)
	}
	if err != nil {
		return a.fail(c, err, "")
	}
	c.Set("Parla-Charged-Cents", "0.000")
	c.Set(fiber.HeaderContentType, out.contentType)
	return c.Send(out.body)
}

// silent reports whether a measure refused the file for holding no speech.
func silent(err error) bool {
	var ie *orders.InputError
	return errors.As(err, &ie) && ie.Code == "no_speech"
}

// withUsage adds OpenAI's usage of a transcription, {"type":"duration","seconds":…}, to a
// json or verbose_json body, and to a verbose_json asked for words an empty words list when
// the engine timed none (clients read t.words without checking).
func withUsage(body []byte, form transcriptionForm, length time.Duration) []byte {
	if form.format != "json" && form.format != "verbose_json" {
		return body
	}
	end := bytes.LastIndexByte(body, '}')
	if end < 0 {
		return body
	}
	var extra []byte
	var has struct {
		Words json.RawMessage `json:"words"`
	}
	if form.format == "verbose_json" && slices.Contains(form.granularities, "word") &&
		json.Unmarshal(body, &has) == nil && has.Words == nil {
		extra = append(extra, `,"words":[]`...)
	}
	extra = append(append(extra, `,"usage":`...), durationUsage(length)...)
	return slices.Concat(body[:end], extra, body[end:])
}

// durationUsage is OpenAI's usage of a transcription of length, {"type":"duration","seconds":…}.
func durationUsage(length time.Duration) json.RawMessage {
	seconds := float64(length.Milliseconds()) / 1000
	return json.RawMessage(`{"type":"duration","seconds":` + strconv.FormatFloat(seconds, 'f', -1, 64) + `}`)
}

// refuse closes the connection after an answer given before the body was read whole, so
// that its unread bytes are never taken for the next request.
func refuse(c *fiber.Ctx, err error) error {
	c.Context().SetConnectionClose()
	return err
}

// checkForm checks the fields as OpenAI states them, naming the parameter at fault.
func checkForm(f *transcriptionForm, translate bool) error {
	models := modelIDs(orders.STT, translate)
	if f.format == "" {
		f.format = transcript.DefaultFormat
	}
	switch {
	case !slices.Contains(models, f.model):
		return unknownModel(f.model, models)
	case !slices.Contains(providers.TranscriptFormats, f.format):
		return invalid("response_format", "invalid_value", "response_format must be one of "+strings.Join(providers.TranscriptFormats, ", ")+".")
	case f.language != "" && (translate || !slices.Contains(orders.TranscriptLanguages, f.language)):
		return invalid("language", "invalid_value", "language must be an ISO-639-1 code of a language the engine knows.")
	case f.temperature != "" && !validTemperature(f.temperature):
		return invalid("temperature", "invalid_value", "temperature must be a number from 0 to 1.")
	case f.stream != "" && f.stream != "true" && f.stream != "false":
		return invalid("stream", "invalid_value", "stream must be true or false.")
	case f.stream == "true" && translate:
		return invalid("stream", "unsupported_value", "Translations are not streamed.")
	case len(f.granularities) > 0 && f.format != "verbose_json":
		return invalid("timestamp_granularities", "invalid_value", "timestamp_granularities need response_format verbose_json.")
	}
	for _, g := range f.granularities {
		if g != "word" && g != "segment" {
			return invalid("timestamp_granularities", "invalid_value", "timestamp_granularities are word and segment.")
		}
	}
	return nil
}

// receive streams the multipart body: the file to a scratch file (at most MaxUploadBytes),
// the other fields into the form. A chunked body (the JS SDK streams files) is read the
// same way.
func (a *API) receive(c *fiber.Ctx) (transcriptionForm, error) {
	var form transcriptionForm
	limit := a.cfg.MaxUploadBytes
	if enc := strings.TrimSpace(string(c.Request().Header.ContentEncoding())); enc != "" && !strings.EqualFold(enc, "identity") {
		return form, invalid("", "unsupported_encoding", "The body must not be compressed (Content-Encoding).")
	}
	if n := c.Request().Header.ContentLength(); n > 0 && int64(n) > limit+fieldLimit {
		return form, tooLarge(limit)
	}
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return form, invalid("file", "invalid_value", "Send the file as multipart/form-data.")
	}
	body := io.LimitReader(requestBody(c), limit+fieldLimit+1)
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return form, partError(err, limit)
		}
		if err := readPart(part, &form, limit, a.cfg.TempDir); err != nil {
			return form, err
		}
	}
	if form.file == "" {
		return form, invalid("file", "missing_required_parameter", "file is required.")
	}
	// The form ends before a chunked body's last chunk: read that too, so the connection
	// is left at the start of the next request.
	_, err = io.Copy(io.Discard, io.LimitReader(body, fieldLimit))
	return form, err
}

// readPart keeps one part of the form.
func readPart(part *multipart.Part, form *transcriptionForm, limit int64, tempDir string) error {
	if part.FormName() == "file" {
		if form.file != "" {
			return invalid("file", "invalid_value", "Send exactly one file.")
		}
		return receiveFile(part, form, limit, tempDir)
	}
	value, err := io.ReadAll(io.LimitReader(part, fieldLimit+1))
	if err != nil {
		return partError(err, limit)
	}
	if len(value) > fieldLimit {
		return invalid(part.FormName(), "string_above_max_length", part.FormName()+" is too long.")
	}
	v := strings.TrimSpace(string(value))
	switch part.FormName() {
	case "model":
		form.model = v
	case "language":
		form.language = strings.ToLower(v)
	case "prompt":
		form.prompt = v
	case "temperature":
		form.temperature = v
	case "stream":
		form.stream = strings.ToLower(v)
	case "response_format":
		form.format = strings.ToLower(v)
	case "timestamp_granularities[]", "timestamp_granularities":
		form.granularities = append(form.granularities, v)
	}
	return nil
}

func receiveFile(part *multipart.Part, form *transcriptionForm, limit int64, tempDir string) error {
	f, err := os.CreateTemp(tempDir, "parla-api-*")
	if err != nil {
		return err
	}
	form.file = f.Name()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(part, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return partError(err, limit)
	case n > limit:
		return tooLarge(limit)
	case n == 0:
		return invalid("file", "empty_file", "The file is empty.")
	}
	form.fileHash = hex.EncodeToString(h.Sum(nil))
	return nil
}

func tooLarge(limit int64) error {
	return &apiError{status: 413, typ: invalidRequest, param: "file", code: "file_too_large",
		message: "The file is larger than the limit of " + strconv.FormatInt(limit>>20, 10) + " MB."}
}

func partError(err error, limit int64) error {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "EOF") {
		return invalid("file", "invalid_value", "The multipart form ends early or is larger than the limit of "+
			strconv.FormatInt(limit>>20, 10)+" MB.")
	}
	return invalid("file", "invalid_value", "The multipart form cannot be read: "+err.Error())
}

// requestBody is the request's body as a stream, its read deadline moved on with every read so
// a large file on a slow line gets the time it needs.
func requestBody(c *fiber.Ctx) io.Reader {
	r := c.Context().RequestBodyStream()
	if r == nil {
		return bytes.NewReader(c.Body())
	}
	return &idleDeadline{r: r, conn: c.Context().Conn()}
}

type idleDeadline struct {
	r    io.Reader
	conn interface{ SetReadDeadline(time.Time) error }
}

func (d *idleDeadline) Read(b []byte) (int, error) {
	if err := d.conn.SetReadDeadline(time.Now().Add(uploadIdle)); err != nil {
		return 0, err
	}
	return d.r.Read(b)
}

// validTemperature reports whether s is a temperature OpenAI takes: a number from 0 to 1.
func validTemperature(s string) bool {
	t, err := strconv.ParseFloat(s, 64)
	return err == nil && t >= 0 && t <= 1
}

// temperature is a checked temperature field's value (0 when unset).
func temperature(s string) float64 {
	t, _ := strconv.ParseFloat(s, 64)
	return t
}
