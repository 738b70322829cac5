package openai

// What the speech and the speech-to-text engines share: the API client and its errors.

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"parla/media"
	"parla/providers"
)

// service is how an engine reaches the API: the client, whether it has a key, the model
// it asks for, and the ffmpeg runner for the audio on either side of the calls.
type service struct {
	client *goopenai.Client
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
	return service{client: newClient(apiKey, baseURL, hc), hasKey: apiKey != "", model: model, media: runner}
}

// available reports an error wrapping providers.ErrUnavailable, prefixed with the engine's
// name, when no API key is set or ffmpeg or ffprobe is missing.
func (s service) available(engine string) error {
	if !s.hasKey {
		return fmt.Errorf("%s: %w: OPENAI_API_KEY not set", engine, providers.ErrUnavailable)
	}
	if err := s.media.Check(); err != nil {
		return fmt.Errorf("%s: %w: %v", engine, providers.ErrUnavailable, err)
	}
	return nil
}

// newClient builds the go-openai client for a key, an optional base URL and HTTP client.
func newClient(apiKey, baseURL string, hc *http.Client) *goopenai.Client {
	cc := goopenai.DefaultConfig(apiKey)
	if baseURL != "" {
		cc.BaseURL = strings.TrimRight(baseURL, "/")
	}
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
