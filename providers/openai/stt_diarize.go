package openai

// Speakers: OpenAI's diarizing model (gpt-4o-transcribe-diarize) answers diarized_json,
// segments that each name a speaker ("A", "B", …) and no word times. go-openai sends the
// form, chunking_strategy included, but does not know that format: it hands the answer
// back as text, which is read here. Each request labels its own speakers, so in a
// recording cut into chunks (longer than MaxChunk) "A" of one chunk need not be "A" of the
// next; the visitor can rename them in the editor.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"parla/providers"
)

// diarizedFormat is the response format of the diarizing models.
const diarizedFormat goopenai.AudioResponseFormat = "diarized_json"

// diarizes reports whether model tells speakers apart, and so answers diarized_json
// instead of verbose_json (which it refuses).
func diarizes(model string) bool {
	return strings.Contains(model, "diarize")
}

// diarized is a diarized_json answer.
type diarized struct {
	Duration float64 `json:"duration"`
	Text     string  `json:"text"`
	Segments []struct {
		Start   float64 `json:"start"`
		End     float64 `json:"end"`
		Text    string  `json:"text"`
		Speaker string  `json:"speaker"`
	} `json:"segments"`
}

// sendDiarized makes req a diarizing request and maps its answer. OpenAI refuses a
// diarizing request past 30 s of audio without a chunking strategy; "auto" lets it cut at
// pauses. It takes no timestamp granularities.
func (t *Transcriber) sendDiarized(ctx context.Context, req goopenai.AudioRequest, fallback time.Duration) (providers.Transcript, error) {
	req.Format = diarizedFormat
	req.ChunkingStrategy = "auto"
	req.TimestampGranularities = nil
	resp, err := t.client.CreateTranscription(ctx, req)
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("requesting a diarized transcription: %w", explain(err))
	}
	return fromDiarized(resp.Text, req.Language, fallback)
}

// fromDiarized maps a diarized_json answer: segments with their speakers, texts trimmed;
// the answer names no language, so the hint stands for it.
func fromDiarized(raw, hint string, fallback time.Duration) (providers.Transcript, error) {
	var d diarized
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return providers.Transcript{}, fmt.Errorf("reading the diarized answer: %w", err)
	}
	tr := newTranscript("", hint, d.Duration, d.Text, fallback)
	for _, s := range d.Segments {
		tr.Segments = append(tr.Segments, providers.Segment{
			Start:   fromSeconds(s.Start),
			End:     fromSeconds(s.End),
			Text:    strings.TrimSpace(s.Text),
			Speaker: strings.TrimSpace(s.Speaker),
		})
	}
	return wholeIfNone(tr), nil
}

// Translates reports nil when the model can be asked for an English translation, so that
// a translation is refused before payment where it cannot be made: the diarizing model
// cannot (OpenAI's translations endpoint serves whisper-1). Other models are taken to
// translate, as before.
func (t *Transcriber) Translates() error {
	if diarizes(t.model) {
		return fmt.Errorf("openai transcription: %s tells speakers apart but does not translate", t.model)
	}
	return nil
}
