package orders

import (
	"context"
	"fmt"
	"io"

	"parla/media"
	"parla/providers"
)

// ttsProducer speaks a text-to-speech order's text with the configured engine.
type ttsProducer struct {
	speaker providers.Speaker
}

func (p ttsProducer) Available() error { return p.speaker.Available() }

// Produce writes the order's audio to w. The engine's progress fills 0–95 %; storing and
// mailing the result take the rest.
func (p ttsProducer) Produce(ctx context.Context, o Order, w io.Writer, progress func(int)) (FileKind, error) {
	params, err := decodeTTSParams(o.Params)
	if err != nil {
		return FileKind{}, err
	}
	format, ok := media.Format(params.Format)
	if !ok {
		return FileKind{}, fmt.Errorf("unknown format %q", params.Format)
	}
	err = p.speaker.Speak(ctx, providers.SpeechRequest{
		Voice: params.Voice, Text: params.Text, Format: params.Format, Speed: params.Speed,
		Language: params.Language, DetectParagraphs: params.Mixed,
		Progress: func(pct int) { progress(pct * 95 / 100) },
	}, w)
	// The extension is the container's (aac is delivered as .m4a), not the format's name.
	return FileKind{Name: "speech", Ext: format.Ext, ContentType: format.ContentType}, err
}

// Release has nothing to delete: the text is erased with the order's parameters.
func (ttsProducer) Release(context.Context, Order) {}
