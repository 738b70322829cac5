package v1

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parla/api/credit"
	"parla/api/orders"
	"parla/media"
	"parla/providers"
)

// speechBody is OpenAI's speech request.
type speechBody struct {
	Model          string   `json:"model"`
	Input          *string  `json:"input"`
	Voice          string   `json:"voice"`
	ResponseFormat string   `json:"response_format"`
	Speed          *float64 `json:"speed"`
	Instructions   string   `json:"instructions"`
	StreamFormat   string   `json:"stream_format"`
}

// voiceMap reads OpenAI's newer voices with the six the site offers.
var voiceMap = map[string]string{
	"alloy": "alloy", "echo": "echo", "fable": "fable", "onyx": "onyx", "nova": "nova", "shimmer": "shimmer",
	"ash": "onyx", "ballad": "fable", "coral": "nova", "sage": "shimmer", "verse": "echo", "marin": "alloy", "cedar": "onyx",
}

// SpeechFormats are the response formats of a speech call; wav and pcm are made from the
// engine's FLAC.
var SpeechFormats = []string{"mp3", "opus", "aac", "flac", "wav", "pcm"}

// speechRequest checks a speech request as OpenAI states its limits, naming the parameter
// at fault; the text's language is settled by the site's rule afterwards.
func speechRequest(b speechBody, maxInput int64) (providers.SpeechRequest, error) {
	req := providers.SpeechRequest{Speed: 1, Format: strings.ToLower(b.ResponseFormat)}
	switch {
	case !isSpeechModel(b.Model):
		return req, unknownModel(b.Model, modelIDs(orders.TTS, false))
	case b.Input == nil:
		return req, invalid("input", "missing_required_parameter", "input is required.")
	case orders.Unspeakable(*b.Input):
		return req, invalid("input", "empty_text", "input has nothing to speak.")
	case orders.CountChars(*b.Input) > maxInput:
		return req, invalid("input", "string_above_max_length", "input is longer than "+strconv.FormatInt(maxInput, 10)+" characters.")
	case voiceMap[strings.ToLower(b.Voice)] == "":
		return req, invalid("voice", "invalid_value", "voice must be one of "+strings.Join(slices.Sorted(maps.Keys(voiceMap)), ", ")+".")
	case b.StreamFormat != "" && b.StreamFormat != "audio" && b.StreamFormat != "sse":
		return req, invalid("stream_format", "invalid_value", "stream_format must be audio or sse.")
	case len(b.Instructions) > 4096:
		return req, invalid("instructions", "string_above_max_length", "instructions are longer than 4,096 characters.")
	}
	if req.Format == "" {
		req.Format = "mp3"
	}
	if !slices.Contains(SpeechFormats, req.Format) {
		return req, invalid("response_format", "invalid_value", "response_format must be one of "+strings.Join(SpeechFormats, ", ")+".")
	}
	if b.Speed != nil {
		req.Speed = *b.Speed
	}
	if !(req.Speed >= 0.25 && req.Speed <= 4) {
		return req, invalid("speed", "invalid_value", "speed must be between 0.25 and 4.")
	}
	req.Text, req.Voice, req.Instructions = *b.Input, voiceMap[strings.ToLower(b.Voice)], b.Instructions
	return req, nil
}

// speech is POST /v1/audio/speech: the text spoken by the site's engine, in the language
// the site would speak it, charged per character.
func (a *API) speech(c *fiber.Ctx) error {
	if err := a.deps.Desk.Available(orders.TTS); err != nil {
		return a.fail(c, err, "")
	}
	var b speechBody
	if err := json.Unmarshal(c.Body(), &b); err != nil {
		return send(c, invalid("", "invalid_json", "The body is not valid JSON: "+err.Error()))
	}
	req, err := speechRequest(b, a.cfg.MaxInput)
	if err != nil {
		return a.fail(c, err, "")
	}
	q, err := a.deps.Desk.QuoteSpeech(req.Text, "", "en")
	if err != nil {
		return a.fail(c, err, "input")
	}
	req.Language, req.DetectParagraphs = q.Language, q.Mixed
	format, fromFLAC := apiFormat(req.Format)
	if fromFLAC {
		req.Format = media.FLAC // made into format from the engine's lossless audio
	}
	call := credit.Call{Model: b.Model, Units: q.Chars, Amount: a.deps.Pricing.Rules[orders.TTS].MilliAmount(q.Chars, 1),
		Fingerprint: fingerprint("speech", b.Model, req.Text, req.Voice, format, strconv.FormatFloat(req.Speed, 'g', -1, 64), b.Instructions)}
	f, _ := media.Format(format)
	work := streamWork{contentType: f.ContentType, work: func(ctx context.Context, w io.Writer) error {
		return a.speak(ctx, req, format, w)
	}}
	if b.StreamFormat == "sse" {
		work = speechEvents(work, q.Chars)
	}
	return a.stream(c, call, work)
}

// speak writes req spoken in format to w as the engine makes it; a format made from the
// engine's FLAC is encoded as the FLAC comes.
func (a *API) speak(ctx context.Context, req providers.SpeechRequest, format string, w io.Writer) error {
	if format == req.Format {
		return a.deps.Speaker.Speak(ctx, req, w)
	}
	flac, out := io.Pipe()
	spoken := make(chan error, 1)
	go func() {
		err := a.deps.Speaker.Speak(ctx, req, out)
		out.CloseWithError(err)
		spoken <- err
	}()
	err := a.deps.Media.Encode(ctx, media.FLACInput, flac, media.EncodeOptions{Format: format}, w)
	flac.CloseWithError(errStreamEnded) // an encode that stopped early stops the engine
	if serr := <-spoken; serr != nil && !errors.Is(serr, errStreamEnded) {
		return serr // the engine's failure, of which the encode's is the consequence
	}
	return err
}

// apiFormat is the media format of a response_format, and whether it is made from the
// engine's FLAC: wav and pcm exist only here, and OpenAI's aac is raw ADTS frames
// (audio/aac) where the site's downloads are M4A. The others are the engine's own.
func apiFormat(responseFormat string) (string, bool) {
	switch responseFormat {
	case media.AAC:
		return media.ADTSStream, true
	case media.WAVFile, media.RawPCM:
		return responseFormat, true
	}
	return responseFormat, false
}
