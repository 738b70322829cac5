package orders

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"parla/media"
	"parla/providers"
)

// PreviewChars is about how much of a visitor's text the free preview speaks.
const PreviewChars = 200

// PreviewText is the start of a text, about n characters long, cut at the end of a
// sentence (media.SentenceEnd, the jobs' rule) if one ends in the second half of it, else
// at a word boundary (a text without spaces, such as Chinese or Japanese, is cut after n
// characters).
func PreviewText(text string, n int) string {
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	runes := []rune(text)
	head := runes[:n]
	limit, half := len(string(head)), len(string(runes[:n/2]))
	// The end of the last sentence in the second half.
	best := 0
	for i := range text[half:limit] {
		if k, ok := media.SentenceEnd(text, half+i, limit); ok {
			best = k
		}
	}
	if best > 0 {
		return strings.TrimSpace(text[:best])
	}
	// Else the last space, if the next character does not continue the word.
	if !unicode.IsSpace(runes[n]) {
		for i := len(head) - 1; i >= n/2; i-- {
			if unicode.IsSpace(head[i]) {
				return strings.TrimSpace(string(head[:i]))
			}
		}
	}
	return strings.TrimSpace(string(head))
}

// PreviewRequest is a free preview as the page asks for it: the order's parameters with
// the whole text, and the language chosen for it (empty: detect).
type PreviewRequest struct {
	Params   TTSParams
	Language string
	Locale   string
}

// Preview is what a free preview speaks, and the file it makes.
type Preview struct {
	Speech           providers.SpeechRequest
	Ext, ContentType string // the format's container: "m4a" and "audio/mp4" for aac
	// Engines are the names of the engines that speak it, in order; nil with one engine.
	Engines []string
}

// SpeechPreview validates a preview as it would an order and returns what to speak: the
// start of the text (PreviewText) in the voice, speed and format chosen, and in the
// language the whole order would be spoken in: a text that mixes languages, each paragraph
// in its own, as the order reads it.
func (d *Desk) SpeechPreview(req PreviewRequest) (Preview, error) {
	params, err := d.cfg.TTS.ValidateTTS(req.Params)
	if err != nil {
		return Preview{}, err
	}
	locale, err := ValidateLocale(req.Locale)
	if err != nil {
		return Preview{}, err
	}
	if err := d.Available(TTS); err != nil {
		return Preview{}, err
	}
	lang, err := d.Readers.settle(params.Text, req.Language, locale)
	if err != nil {
		return Preview{}, err
	}
	format, ok := media.Format(params.Format)
	if !ok {
		return Preview{}, fmt.Errorf("unknown format %q", params.Format)
	}
	speech := providers.SpeechRequest{
		Voice: params.Voice, Format: params.Format, Speed: params.Speed,
		Text: PreviewText(params.Text, PreviewChars), Language: lang.Language, DetectParagraphs: len(lang.Spans) > 1,
	}
	pv := Preview{Speech: speech, Ext: format.Ext, ContentType: format.ContentType}
	pv.Engines = d.Readers.engines(speech)
	return pv, nil
}
