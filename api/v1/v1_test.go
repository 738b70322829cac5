package v1

import (
	"errors"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// A speech request is checked as OpenAI states its limits, and each refusal names its
// parameter; OpenAI's newer voices read as the site's six.
func TestSpeechRequestNamesTheParameterAtFault(t *testing.T) {
	ok := speechBody{Model: "tts-1", Input: ptr("Hello."), Voice: "Coral"}
	req, err := speechRequest(ok, 4096)
	if err != nil || req.Voice != "nova" || req.Format != "mp3" || req.Speed != 1 {
		t.Fatalf("%+v, %v", req, err)
	}
	for _, c := range []struct {
		change func(*speechBody)
		param  string
	}{
		{func(b *speechBody) { b.Model = "gpt-5" }, "model"},
		{func(b *speechBody) { b.Input = nil }, "input"},
		{func(b *speechBody) { b.Input = ptr(" … ") }, "input"},
		{func(b *speechBody) { b.Input = ptr(strings.Repeat("é", 4097)) }, "input"},
		{func(b *speechBody) { b.Voice = "robot" }, "voice"},
		{func(b *speechBody) { b.ResponseFormat = "ogg" }, "response_format"},
		{func(b *speechBody) { b.Speed = ptr(4.5) }, "speed"},
		{func(b *speechBody) { b.Speed = ptr(0.2) }, "speed"},
		{func(b *speechBody) { b.StreamFormat = "websocket" }, "stream_format"},
	} {
		b := ok
		c.change(&b)
		_, err := speechRequest(b, 4096)
		var ae *apiError
		if !errors.As(err, &ae) || ae.status != 400 || ae.param != c.param || ae.typ != invalidRequest {
			t.Errorf("%+v: %v, want a 400 naming %s", b, err, c.param)
		}
	}
	for _, f := range []string{"audio", "sse"} { // raw audio as it is made, or OpenAI's events
		if _, err := speechRequest(speechBody{Model: "tts-1", Input: ptr("Hello."), Voice: "alloy", StreamFormat: f}, 4096); err != nil {
			t.Errorf("stream_format %s: %v", f, err)
		}
	}
	if _, err := speechRequest(speechBody{Model: "tts-1", Input: ptr(strings.Repeat("é", 4096)), Voice: "alloy", ResponseFormat: "PCM"}, 4096); err != nil {
		t.Errorf("4,096 characters in pcm: %v", err)
	}
}

// A transcription's fields: models, formats, languages and granularities as OpenAI's.
func TestCheckFormNamesTheParameterAtFault(t *testing.T) {
	for _, c := range []struct {
		form      transcriptionForm
		translate bool
		param     string
	}{
		{transcriptionForm{model: "whisper-1"}, false, ""},
		{transcriptionForm{model: "gpt-4o-transcribe", format: "srt", language: "de"}, false, ""},
		{transcriptionForm{model: "whisper-1", format: "verbose_json", granularities: []string{"word", "segment"}}, false, ""},
		{transcriptionForm{model: "gpt-4o-transcribe"}, true, "model"},
		{transcriptionForm{model: "whisper-1", language: "de"}, true, "language"},
		{transcriptionForm{model: "whisper-1", language: "xx"}, false, "language"},
		{transcriptionForm{model: "whisper-1", format: "docx"}, false, "response_format"},
		{transcriptionForm{model: "whisper-1", granularities: []string{"word"}}, false, "timestamp_granularities"},
		{transcriptionForm{model: "whisper-1", format: "verbose_json", granularities: []string{"char"}}, false, "timestamp_granularities"},
		{transcriptionForm{model: "whisper-1", temperature: "0.2"}, false, ""},
		{transcriptionForm{model: "whisper-1", temperature: "1.5"}, false, "temperature"},
		{transcriptionForm{model: "whisper-1", temperature: "NaN"}, false, "temperature"},
		{transcriptionForm{model: "gpt-4o-mini-transcribe", stream: "true"}, false, ""},
		{transcriptionForm{model: "whisper-1", stream: "yes"}, false, "stream"},
		{transcriptionForm{model: "whisper-1", stream: "true"}, true, "stream"},
	} {
		err := checkForm(&c.form, c.translate)
		var ae *apiError
		switch {
		case c.param == "" && err != nil:
			t.Errorf("%+v refused: %v", c.form, err)
		case c.param != "" && (!errors.As(err, &ae) || ae.param != c.param):
			t.Errorf("%+v: %v, want a refusal naming %s", c.form, err, c.param)
		}
	}
}

// OpenAI's dated snapshots are taken as their plain names; an unknown name is refused
// naming the model, and translations take whisper-1 alone, as OpenAI's.
func TestPinnedModelNamesAreTaken(t *testing.T) {
	if _, err := speechRequest(speechBody{Model: "gpt-4o-mini-tts-2025-12-15", Input: ptr("Hello."), Voice: "alloy"}, 4096); err != nil {
		t.Errorf("a pinned speech model: %v", err)
	}
	for _, c := range []struct {
		model     string
		translate bool
		ok        bool
	}{
		{"gpt-4o-mini-transcribe-2025-12-15", false, true},
		{"gpt-4o-mini-transcribe-2025-03-20", false, true},
		{"gpt-4o-mini-transcribe-2025-12-15", true, false},
		{"whisper-1", true, true},
		{"tts-1", false, false},
	} {
		err := checkForm(&transcriptionForm{model: c.model}, c.translate)
		if (err == nil) != c.ok {
			t.Errorf("%s (translate %v): %v, want ok %v", c.model, c.translate, err, c.ok)
		}
	}
	if !isSpeechModel("gpt-4o-mini-tts-2025-03-20") || isSpeechModel("whisper-1") {
		t.Error("isSpeechModel")
	}
}
