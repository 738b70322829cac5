package orders

import (
	"encoding/json"
	"fmt"
	"time"

	"parla/media/links"
	"parla/providers"
)

// Stored order parameters are a versioned format: every field has an explicit json name,
// and "v" says which layout wrote them. Renaming a Go field changes nothing stored; a
// change of layout bumps ParamsVersion and teaches the decoders the old one. Parameters
// written before versioning (no "v") are layout 1.
const ParamsVersion = 2

// TTSParams are the parameters of a text-to-speech order.
type TTSParams struct {
	Version int     `json:"v"`
	Voice   string  `json:"voice"`
	Format  string  `json:"format"`
	Speed   float64 `json:"speed"`
	Text    string  `json:"text"`
	// Language is the code the text is spoken in, chosen or detected at checkout; empty in
	// orders taken before languages were (the engine's default, English).
	Language string `json:"language,omitempty"`
	// Mixed says the language was detected and the paragraphs differ: the engine speaks
	// each paragraph in its own, Language being the main one.
	Mixed bool `json:"mixed,omitempty"`
}

// TranscriptParams are the parameters of an audio- or video-to-text order.
type TranscriptParams struct {
	Version  int    `json:"v"`
	Format   string `json:"format"`
	Language string `json:"language,omitempty"`
	Seconds  int64  `json:"seconds"` // billed duration
	// Translate: the visitor ordered an English translation of the speech rather than a
	// transcript in its own language (same price). Absent in older rows: a transcript.
	Translate bool `json:"translate,omitempty"`
	// Audio-to-text: the upload.
	Upload   string `json:"upload,omitempty"`
	FileName string `json:"fileName,omitempty"`
	// Video-to-text: the link as analysed.
	Link *LinkParams `json:"link,omitempty"`
}

// LinkParams is a video link as analysed before payment, as the order stores it.
type LinkParams struct {
	Site       string `json:"site"`
	URL        string `json:"url"`
	ID         string `json:"id,omitempty"`
	Title      string `json:"title,omitempty"`
	DurationMS int64  `json:"durationMs"`
	// SpeechMS is how much of the video was speech when analysed; absent when it was not
	// measured (see links.LinkInfo.SpeechMeasured).
	SpeechMS *int64 `json:"speechMs,omitempty"`
	// SizeBytes is the direct link's size when analysed (links.LinkInfo.Size); absent when
	// unknown, and in orders stored before it was kept.
	SizeBytes int64 `json:"sizeBytes,omitempty"`
}

func linkParams(info links.LinkInfo) *LinkParams {
	p := &LinkParams{Site: info.Site, URL: info.URL, ID: info.ID, Title: info.Title,
		DurationMS: info.Duration.Milliseconds(), SizeBytes: info.Size}
	if info.SpeechMeasured {
		ms := info.Speech.Milliseconds()
		p.SpeechMS = &ms
	}
	return p
}

func (l LinkParams) info() links.LinkInfo {
	info := links.LinkInfo{Site: l.Site, URL: l.URL, ID: l.ID, Title: l.Title,
		Duration: time.Duration(l.DurationMS) * time.Millisecond, Size: l.SizeBytes}
	if l.SpeechMS != nil {
		info.Speech, info.SpeechMeasured = time.Duration(*l.SpeechMS)*time.Millisecond, true
	}
	return info
}

// linkParamsV1 is how layout 1 stored a link: links.LinkInfo encoded without tags, so
// with Go's field names and the duration in nanoseconds.
type linkParamsV1 struct {
	Site     string `json:"Site"`
	URL      string `json:"URL"`
	ID       string `json:"ID"`
	Title    string `json:"Title"`
	Duration int64  `json:"Duration"`
}

// encodeParams stamps the current layout on an order's parameters and encodes them.
func encodeParams(p any) (json.RawMessage, error) {
	switch p := p.(type) {
	case TTSParams:
		p.Version = ParamsVersion
		return json.Marshal(p)
	case TranscriptParams:
		p.Version = ParamsVersion
		return json.Marshal(p)
	}
	return nil, fmt.Errorf("encoding order: unknown parameters %T", p)
}

// version reads the layout of stored parameters.
func version(raw json.RawMessage) (int, error) {
	var v struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("decoding parameters: %w", err)
	}
	if v.V == 0 {
		return 1, nil
	}
	if v.V > ParamsVersion {
		return 0, fmt.Errorf("decoding parameters: layout %d is newer than this program (%d)", v.V, ParamsVersion)
	}
	return v.V, nil
}

// decodeTTSParams reads a text-to-speech order's parameters in any layout. Layout 1 had
// the same names.
func decodeTTSParams(raw json.RawMessage) (TTSParams, error) {
	var p TTSParams
	if _, err := version(raw); err != nil {
		return p, err
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("decoding parameters: %w", err)
	}
	p.Version = ParamsVersion
	return p, nil
}

// decodeTranscriptParams reads a transcription order's parameters in any layout.
func decodeTranscriptParams(raw json.RawMessage) (TranscriptParams, error) {
	var p TranscriptParams
	v, err := version(raw)
	if err != nil {
		return p, err
	}
	if v == 1 {
		return decodeTranscriptParamsV1(raw)
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("decoding parameters: %w", err)
	}
	return p, nil
}

func decodeTranscriptParamsV1(raw json.RawMessage) (TranscriptParams, error) {
	var old struct {
		TranscriptParams
		Link *linkParamsV1 `json:"link,omitempty"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return TranscriptParams{}, fmt.Errorf("decoding layout 1 parameters: %w", err)
	}
	p := old.TranscriptParams
	p.Version = ParamsVersion
	if l := old.Link; l != nil {
		p.Link = &LinkParams{Site: l.Site, URL: l.URL, ID: l.ID, Title: l.Title,
			DurationMS: time.Duration(l.Duration).Milliseconds()}
	}
	return p, nil
}

// Kept is what the link page tells about a delivered order once its parameters are erased
// (the text and the address go at delivery): what was bought, and for a transcription its
// segments, so that the other formats can be rendered at no charge. It is stored next to
// the result (keptKey) and deleted with it: after the link's 10 days, or by "delete now".
type Kept struct {
	Service    Service `json:"service"`
	Format     string  `json:"format"`
	Voice      string  `json:"voice,omitempty"`
	Characters int64   `json:"characters,omitempty"` // text-to-speech
	Seconds    int64   `json:"seconds,omitempty"`    // transcriptions: the billed length
	Translated bool    `json:"translated,omitempty"`
	// Transcript is the transcription's text and segments; nil for speech.
	Transcript *providers.Transcript `json:"transcript,omitempty"`
}

// keptOf reads what an order bought from its parameters (present until it is done).
func keptOf(o Order, t *providers.Transcript) Kept {
	k := Kept{Service: o.Service, Transcript: t}
	if o.Service == TTS {
		if p, err := decodeTTSParams(o.Params); err == nil {
			k.Format, k.Voice, k.Characters = p.Format, p.Voice, CountChars(p.Text)
		}
		return k
	}
	if p, err := decodeTranscriptParams(o.Params); err == nil {
		k.Format, k.Seconds, k.Translated = p.Format, p.Seconds, p.Translate
	}
	return k
}
