package espeak

import (
	"errors"
	"fmt"

	"parla/media"
	"parla/providers"
)

// chunk is one espeak-ng run: a piece of the text and the voice (-v) that reads it.
type chunk struct {
	Text  string
	Voice string
}

// plan cuts the request's text into chunks of at most maxChars characters, each read with
// the product voice's English variant.
func plan(req providers.SpeechRequest, maxChars int) ([]chunk, error) {
	voice, ok := voices[req.Voice]
	if !ok {
		return nil, fmt.Errorf("espeak: unknown voice %q", req.Voice)
	}
	var chunks []chunk
	for _, text := range media.SplitText(req.Text, maxChars) {
		chunks = append(chunks, chunk{Text: text, Voice: voice})
	}
	if len(chunks) == 0 {
		return nil, errors.New("espeak: empty text")
	}
	return chunks, nil
}
