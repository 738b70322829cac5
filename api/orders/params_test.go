package orders

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Parameters exactly as the layout before versioning wrote them: TTSParams with the same
// names, and a video's links.LinkInfo encoded without tags (Go's field names, nanoseconds).
const (
	ttsParamsV1   = `{"voice":"nova","format":"mp3","speed":1.5,"text":"Hola, mundo."}`
	videoParamsV1 = `{"format":"srt","language":"en","seconds":90,"link":{"Site":"direct","URL":"https://videos.example/talk.mp4","ID":"","Title":"A talk","Duration":90500000000}}`
	audioParamsV1 = `{"format":"vtt","seconds":12,"upload":"up123","fileName":"talk.mp3"}`
)

func TestDecodesParametersOfThePreviousLayout(t *testing.T) {
	tts, err := decodeTTSParams(json.RawMessage(ttsParamsV1))
	if err != nil || tts != (TTSParams{Version: ParamsVersion, Voice: "nova", Format: "mp3", Speed: 1.5, Text: "Hola, mundo."}) {
		t.Errorf("tts v1 = %+v, %v", tts, err)
	}
	video, err := decodeTranscriptParams(json.RawMessage(videoParamsV1))
	if err != nil || video.Format != "srt" || video.Language != "en" || video.Seconds != 90 || video.Link == nil {
		t.Fatalf("video v1 = %+v, %v", video, err)
	}
	want := LinkParams{Site: "direct", URL: "https://videos.example/talk.mp4", Title: "A talk", DurationMS: 90500}
	if *video.Link != want || video.Link.info().Duration != 90500*time.Millisecond {
		t.Errorf("video v1 link = %+v, want %+v", *video.Link, want)
	}
	audio, err := decodeTranscriptParams(json.RawMessage(audioParamsV1))
	if err != nil || audio.Upload != "up123" || audio.FileName != "talk.mp3" || audio.Format != "vtt" || audio.Link != nil {
		t.Errorf("audio v1 = %+v, %v", audio, err)
	}
}

func TestStoredParametersCarryTheirLayoutAndExplicitNames(t *testing.T) {
	raw, err := encodeParams(TranscriptParams{Format: "json", Seconds: 61, Link: &LinkParams{Site: "youtube", URL: "https://youtu.be/x", ID: "x", DurationMS: 61000}})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"v":2,"format":"json","seconds":61,"link":{"site":"youtube","url":"https://youtu.be/x","id":"x","durationMs":61000}}`
	if string(raw) != want {
		t.Errorf("encoded\n got %s\nwant %s", raw, want)
	}
	back, err := decodeTranscriptParams(raw)
	if err != nil || back.Link == nil || back.Link.ID != "x" || back.Version != ParamsVersion {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	if _, err := decodeTranscriptParams(json.RawMessage(`{"v":99,"format":"json"}`)); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("a layout from the future decodes: %v", err)
	}
	if _, err := encodeParams(struct{}{}); err == nil {
		t.Error("unknown parameters encode")
	}
}

// An order stored by the previous layout and paid after an upgrade is delivered.
func TestOrderStoredByThePreviousLayoutIsDelivered(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.links.set("https://videos.example/talk.mp4", 90*time.Second)
	for _, o := range []Order{
		{ID: newID(), Service: VTT, Params: json.RawMessage(videoParamsV1)},
		{ID: newID(), Service: TTS, Params: json.RawMessage(ttsParamsV1)},
	} {
		o.Status, o.Email, o.Locale, o.Amount, o.Currency = Paid, "old@example.com", "en", 149, "eur"
		o.CreatedAt, o.PaidAt = f.clock.Now(), f.clock.Now()
		if err := f.book.orders.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		if err := f.book.queue.Fulfil(ctx, o.ID); err != nil {
			t.Fatal(err)
		}
		done := f.waitStatus(t, o.ID, Done)
		if done.ResultKey == "" || done.LinkToken == "" {
			t.Errorf("%s order of the previous layout: %+v", o.Service, done)
		}
	}
}

// The translate flag and a link's measured speech are optional: rows written before them
// decode as a transcript with the speech unmeasured, and they survive a round trip.
func TestTranscriptParamsTranslateAndSpeech(t *testing.T) {
	old, err := decodeTranscriptParams([]byte(`{"v":2,"format":"srt","seconds":60,"link":{"site":"direct","url":"https://x.example/a.mp4","durationMs":60000}}`))
	if err != nil || old.Translate || old.Link.SpeechMS != nil || old.Link.info().SpeechMeasured {
		t.Fatalf("old row: %+v, %v", old, err)
	}
	speech := int64(41000)
	raw, err := encodeParams(TranscriptParams{Format: "vtt", Seconds: 60, Translate: true,
		Link: &LinkParams{Site: "direct", URL: "https://x.example/a.mp4", DurationMS: 60000, SpeechMS: &speech}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"translate":true`; !strings.Contains(string(raw), want) || !strings.Contains(string(raw), `"speechMs":41000`) {
		t.Fatalf("encoded %s", raw)
	}
	p, err := decodeTranscriptParams(raw)
	if info := p.Link.info(); err != nil || !p.Translate || !info.SpeechMeasured || info.Speech != 41*time.Second {
		t.Fatalf("decoded %+v (%+v), %v", p, p.Link.info(), err)
	}
}

// The language an order is spoken in is stored under its own name; orders stored before
// it (layout 1, and layout 2 without it) decode with none: the engine's default, English,
// as they were taken.
func TestTTSParamsStoreTheLanguage(t *testing.T) {
	raw, err := encodeParams(TTSParams{Voice: "nova", Format: "mp3", Speed: 1, Text: "Hola", Language: "es", Mixed: true})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"v":2,"voice":"nova","format":"mp3","speed":1,"text":"Hola","language":"es","mixed":true}`
	if string(raw) != want {
		t.Errorf("encoded\n got %s\nwant %s", raw, want)
	}
	if back, err := decodeTTSParams(raw); err != nil || back.Language != "es" || !back.Mixed {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	for _, old := range []string{ttsParamsV1, `{"v":2,"voice":"nova","format":"mp3","speed":1,"text":"Hi"}`} {
		if p, err := decodeTTSParams(json.RawMessage(old)); err != nil || p.Language != "" || p.Mixed {
			t.Errorf("%s = %+v, %v", old, p, err)
		}
	}
}
