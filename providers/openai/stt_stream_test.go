package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"parla/providers"
)

// A transcription asked for its pieces (Partial) is asked of the server with stream=true,
// and each transcript.text.delta reaches Partial as it comes; the transcript is the done
// event's text. A server that ignores stream and answers JSON gives its text as one piece;
// one whose stream fails mid-way (an error event) fails the transcription.
func TestTranscribeStreamsTheServersDeltas(t *testing.T) {
	var streamed []string
	answer := "events"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(32 << 20); err != nil || r.URL.Path != "/v1/audio/transcriptions" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		streamed = append(streamed, r.FormValue("stream")+" "+r.FormValue("prompt"))
		switch answer {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"text":"Whole at once."}`)
			return
		case "broken":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"type\":\"transcript.text.delta\",\"delta\":\"Hel\"}\n\n")
			fmt.Fprint(w, "data: {\"type\":\"error\",\"error\":{\"message\":\"the engine fell over\"}}\n\n")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		for _, e := range []string{`{"type":"transcript.text.delta","delta":"Hello"}`, `{"type":"transcript.text.delta","delta":" world."}`,
			`{"type":"transcript.text.done","text":"Hello world.","usage":{"type":"duration","seconds":2}}`} {
			fmt.Fprint(w, "data: "+e+"\n\n")
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	tr := NewTranscriber(TranscriberConfig{APIKey: "k", BaseURL: srv.URL + "/v1", Model: "gpt-4o-mini-transcribe"})
	wav := speechWAV(t)
	var pieces []string
	req := providers.TranscribeRequest{Path: wav, Prompt: "Parla", Partial: func(s string) { pieces = append(pieces, s) }}

	got, err := tr.Transcribe(context.Background(), req)
	if err != nil || got.Text != "Hello world." || strings.Join(pieces, "|") != "Hello| world." {
		t.Errorf("streamed: %q, pieces %q, %v", got.Text, pieces, err)
	}
	if len(streamed) != 1 || streamed[0] != "true Parla" {
		t.Errorf("the server was asked %q, want stream=true with the prompt", streamed)
	}

	answer, pieces = "json", nil
	if got, err := tr.Transcribe(context.Background(), req); err != nil || got.Text != "Whole at once." || len(pieces) != 1 {
		t.Errorf("a JSON answer: %q, pieces %q, %v", got.Text, pieces, err)
	}
	answer = "broken"
	if _, err := tr.Transcribe(context.Background(), req); err == nil || !strings.Contains(err.Error(), "the engine fell over") {
		t.Errorf("a stream that failed mid-way: %v", err)
	}
}
