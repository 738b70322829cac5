package v1

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"time"

	"parla/providers"
)

// eventStream is the content type of server-sent events.
const eventStream = "text/event-stream"

// event writes v as one server-sent event, as OpenAI's streams send them: "data: <json>".
func event(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "data: "+string(b)+"\n\n")
	return err
}

// errorEvent ends a stream that failed after its first byte with OpenAI's error event:
// the error an unstreamed call would have answered (the SDKs raise it).
func errorEvent(w io.Writer, err error) {
	event(w, map[string]any{"type": "error", "error": errorBody(classify(err, ""))})
}

// speechEvents makes a speech call's stream OpenAI's stream_format sse:
// speech.audio.delta events, each with a piece of the audio in base64, then
// speech.audio.done with the usage (the characters charged, as input tokens).
func speechEvents(s streamWork, chars int64) streamWork {
	return streamWork{contentType: eventStream, abort: errorEvent,
		work: func(ctx context.Context, w io.Writer) error {
			if err := s.work(ctx, audioDeltas{w}); err != nil {
				return err
			}
			usage := map[string]int64{"input_tokens": chars, "output_tokens": 0, "total_tokens": chars}
			return event(w, map[string]any{"type": "speech.audio.done", "usage": usage})
		}}
}

// audioDeltas writes each piece of audio as a speech.audio.delta event.
type audioDeltas struct{ w io.Writer }

func (d audioDeltas) Write(b []byte) (int, error) {
	if err := event(d.w, map[string]string{"type": "speech.audio.delta", "audio": base64.StdEncoding.EncodeToString(b)}); err != nil {
		return 0, err
	}
	return len(b), nil
}

// transcriptEvents is a streamed transcription of req, as OpenAI's stream: a
// transcript.text.delta event with each piece of text as the engine decodes it, then
// transcript.text.done with the whole text and the usage (the seconds charged).
func (a *API) transcriptEvents(req providers.TranscribeRequest, length time.Duration) streamWork {
	return streamWork{contentType: eventStream, abort: errorEvent,
		work: func(ctx context.Context, w io.Writer) error {
			ctx, stop := context.WithCancelCause(ctx)
			defer stop(nil)
			req.Partial = func(text string) {
				if err := event(w, map[string]string{"type": "transcript.text.delta", "delta": text}); err != nil {
					stop(err) // the stream is closed: the engine stops
				}
			}
			t, err := a.deps.Transcriber.Transcribe(ctx, req)
			if err != nil {
				return err
			}
			return event(w, textDone(t.Text, length))
		}}
}

// textDone is the transcript.text.done event of a text, with OpenAI's usage of a
// transcription.
func textDone(text string, length time.Duration) map[string]any {
	return map[string]any{"type": "transcript.text.done", "text": text, "usage": durationUsage(length)}
}
