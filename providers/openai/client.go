package openai

// What the speech and the speech-to-text engines share: the API client and its errors.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"parla/media"
	"parla/providers"
)

// service is how an engine reaches the API: the client, the server it calls (and whether
// that is up), whether it has a key, the model it asks for, and the ffmpeg runner for the
// audio on either side of the calls.
type service struct {
	client *goopenai.Client
	server *server
	hasKey bool
	model  string
	media  *media.Runner
}

// newService builds the service for a key, an optional base URL and HTTP client, a model,
// and a runner (nil: a Runner of its own).
func newService(apiKey, baseURL string, hc *http.Client, model string, runner *media.Runner) service {
	if runner == nil {
		runner = media.New(media.Config{})
	}
	baseURL = strings.TrimRight(cmp.Or(baseURL, DefaultBaseURL), "/")
	srv := newServer(baseURL, apiKey, hc) // the user info, if any, kept apart (server.user)
	return service{client: newClient(apiKey, srv.base, srv.client()), server: srv,
		hasKey: apiKey != "", model: model, media: runner}
}

// available reports an error wrapping providers.ErrUnavailable, prefixed with the engine's
// name, when OpenAI's own API is called without a key (a server at another base URL may
// need none: the calls then carry no Authorization header), when the server was last
// found down, or when ffmpeg or ffprobe is missing.
func (s service) available(engine string) error {
	if !s.hasKey && s.server.base == DefaultBaseURL {
		return fmt.Errorf("%s: %w: OPENAI_API_KEY not set", engine, providers.ErrUnavailable)
	}
	if err := s.server.Down(); err != nil {
		return fmt.Errorf("%s: %w: %v", engine, providers.ErrUnavailable, err)
	}
	if err := s.media.Check(); err != nil {
		return fmt.Errorf("%s: %w: %v", engine, providers.ErrUnavailable, err)
	}
	return nil
}

// Check asks the engine's server whether it is up (GET /models; see server.Check); the
// answer closes or opens the engine (Available) until the next check or call.
func (s service) Check(ctx context.Context) error { return s.server.Check(ctx) }

// BaseURL is the server the engine calls, for the operator: without the user name and
// password a configured base URL may hold.
func (s service) BaseURL() string { return s.server.base }

// newClient builds the go-openai client for a key, a base URL and an optional HTTP client.
// Without a key go-openai sends no Authorization header.
func newClient(apiKey, baseURL string, hc *http.Client) *goopenai.Client {
	cc := goopenai.DefaultConfig(apiKey)
	cc.BaseURL = baseURL
	if hc != nil {
		cc.HTTPClient = hc
	}
	return goopenai.NewClientWithConfig(cc)
}

// HTTPStatus returns the HTTP status of a failed API call in err's chain, or 0 when the
// server did not answer (network error, cancelled context).
func HTTPStatus(err error) int {
	var apiErr *goopenai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode
	}
	var reqErr *goopenai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	return 0
}

// refusal is a call the server refused in a shape go-openai does not read (FastAPI's
// {"detail": …}, as Kokoro-FastAPI and speaches answer): its status and what the answer
// says, for the operator's log. It wraps go-openai's error, so HTTPStatus still finds the
// status.
type refusal struct {
	status int
	text   string
	err    error
}

func (e *refusal) Error() string { return fmt.Sprintf("the server answered %d: %s", e.status, e.text) }
func (e *refusal) Unwrap() error { return e.err }

// explain turns a refusal go-openai could not read into one that says what the server
// said, and marks a final refusal (see final) as providers.ErrRefused; other errors pass as
// they are.
func explain(err error) error {
	var reqErr *goopenai.RequestError
	if errors.As(err, &reqErr) && len(reqErr.Body) > 0 {
		err = &refusal{status: reqErr.HTTPStatusCode, text: answerText(reqErr.Body), err: err}
	}
	if final(HTTPStatus(err)) {
		return fmt.Errorf("%w: %w", providers.ErrRefused, err)
	}
	return err
}

// final says an HTTP status refuses the request itself, so that a retry gets the same
// answer: a 4xx other than 408 (timeout), 409 (conflict) and 429 (rate limit or quota).
func final(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return false
	}
	return status >= 400 && status < 500
}

// answerText is what an error answer says: FastAPI's detail ({"error","message"} as
// Kokoro-FastAPI raises it, a string, or a validation list), else the body itself, cut.
func answerText(body []byte) string {
	var answer struct {
		Detail json.RawMessage `json:"detail"`
	}
	var detail struct{ Error, Message string }
	var text string
	var list []struct{ Msg string }
	switch {
	case json.Unmarshal(body, &answer) != nil || len(answer.Detail) == 0:
	case json.Unmarshal(answer.Detail, &detail) == nil && detail.Message != "":
		return strings.TrimPrefix(detail.Error+": ", ": ") + detail.Message
	case json.Unmarshal(answer.Detail, &text) == nil && text != "":
		return text
	case json.Unmarshal(answer.Detail, &list) == nil && len(list) > 0:
		return list[0].Msg
	}
	text = strings.TrimSpace(string(body))
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	return text
}
