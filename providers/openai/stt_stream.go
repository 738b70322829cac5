package openai

// A remote engine's streamed transcription: OpenAI's stream=true, answered with
// server-sent events (transcript.text.delta, then transcript.text.done).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"parla/providers"
)

// sendStreamed asks the server for the transcription of the file at path as a stream and
// passes each delta to r.Partial as it comes. The transcript is the done event's text, in
// one segment (a stream carries no times). A server that ignores stream and answers JSON
// is read whole, its text passed on as one piece.
func (t *Transcriber) sendStreamed(ctx context.Context, path, name string, fallback time.Duration, r providers.TranscribeRequest) (providers.Transcript, error) {
	body, ctype := streamForm(path, name, t.model, r)
	defer body.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.server.base+"/audio/transcriptions", body)
	if err != nil {
		return providers.Transcript{}, err
	}
	req.Header.Set("Content-Type", ctype)
	if t.server.key != "" {
		req.Header.Set("Authorization", "Bearer "+t.server.key)
	}
	resp, err := t.server.client().Do(req)
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("requesting a streamed transcription: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return providers.Transcript{}, fmt.Errorf("requesting a streamed transcription: %w", refused(resp.StatusCode, b))
	}
	var text string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		text, err = readTranscriptEvents(resp.Body, r.Partial)
	} else {
		text, err = readTranscriptJSON(resp.Body, r.Partial)
	}
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("reading a streamed transcription: %w", err)
	}
	return wholeIfNone(newTranscript("", r.Language, 0, text, fallback)), nil
}

// refused is a server's refusal of a request: final (providers.ErrRefused) for a 4xx
// that a retry cannot fix, as explain says of the client's.
func refused(status int, body []byte) error {
	err := error(&refusal{status: status, text: answerText(body)})
	if final(status) {
		return fmt.Errorf("%w: %w", providers.ErrRefused, err)
	}
	return err
}

// streamForm is the multipart form of a streamed transcription, written as it is read.
func streamForm(path, name, model string, r providers.TranscribeRequest) (io.ReadCloser, string) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(writeStreamForm(mw, path, name, model, r))
	}()
	return pr, mw.FormDataContentType()
}

func writeStreamForm(mw *multipart.Writer, path, name, model string, r providers.TranscribeRequest) error {
	fields := [][2]string{{"model", model}, {"stream", "true"}, {"response_format", "json"},
		{"language", r.Language}, {"prompt", r.Prompt}}
	if r.Temperature > 0 {
		fields = append(fields, [2]string{"temperature", strconv.FormatFloat(r.Temperature, 'f', -1, 64)})
	}
	for _, f := range fields {
		if f[1] == "" {
			continue
		}
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	part, err := mw.CreateFormFile("file", name)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(part, f); err != nil {
		return err
	}
	return mw.Close()
}

// transcriptEvent is one event of OpenAI's transcription stream.
type transcriptEvent struct {
	Type  string `json:"type"`
	Delta string `json:"delta"`
	Text  string `json:"text"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// readTranscriptEvents reads a transcription's events, passing each delta to partial, and
// returns the done event's text; a stream that ends without it, or with an error event,
// fails.
func readTranscriptEvents(r io.Reader, partial func(string)) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok || strings.TrimSpace(data) == "[DONE]" {
			continue
		}
		var e transcriptEvent
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return "", fmt.Errorf("an event that is not JSON: %w", err)
		}
		switch {
		case e.Error != nil:
			return "", fmt.Errorf("the server's stream failed: %s", e.Error.Message)
		case e.Type == "transcript.text.delta" && e.Delta != "":
			partial(e.Delta)
		case e.Type == "transcript.text.done":
			return e.Text, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", io.ErrUnexpectedEOF
}

// readTranscriptJSON reads a whole JSON transcription and passes its text on as one piece.
func readTranscriptJSON(r io.Reader, partial func(string)) (string, error) {
	var body struct {
		Text string `json:"text"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 16<<20)).Decode(&body); err != nil {
		return "", err
	}
	if body.Text != "" {
		partial(body.Text)
	}
	return body.Text, nil
}
