package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"parla/media"
	"parla/providers"
	"parla/providers/testkit"
)

// counted serves h and counts the requests that reach the server at all, telling each
// count to seen when set.
type counted struct {
	h    http.Handler
	n    atomic.Int32
	seen func(n int32)
}

func (c *counted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.n.Add(1)
	if c.seen != nil {
		c.seen(n)
	}
	c.h.ServeHTTP(w, r)
}

// gateCtx carries a process gate that refuses with lost once closed is set.
func gateCtx(closed *atomic.Bool, lost error) context.Context {
	return media.WithProcessGate(context.Background(), func() error {
		if closed.Load() {
			return lost
		}
		return nil
	})
}

// Each call to the engine's server passes the process gate (media.ProcessGate), as each
// ffmpeg run does: a runner that may have lost its order (its lease lapsed) sends no
// request, the gate's error ends its work, and the server is not thought down for it. An
// open gate changes nothing.
func TestSpeechCallsPassTheGate(t *testing.T) {
	api := &fakeAPI{t: t, ffmpeg: testkit.Binary(t, "ffmpeg")}
	c := &counted{h: api}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	s := newSpeaker(t, srv)
	lost := errors.New("lost")
	var closed atomic.Bool
	ctx := gateCtx(&closed, lost)
	req := providers.SpeechRequest{Voice: "nova", Text: "Hello there.", Format: "mp3", Speed: 1}

	closed.Store(true)
	if err := s.Speak(ctx, req, io.Discard); !errors.Is(err, lost) {
		t.Errorf("gate closed: Speak = %v, want the gate's error", err)
	}
	if n := c.n.Load(); n != 0 {
		t.Errorf("gate closed: %d requests reached the server, want none", n)
	}
	if err := s.Available(); err != nil {
		t.Errorf("a refusal by the gate took the server down: %v", err)
	}

	closed.Store(false)
	var out bytes.Buffer
	if err := s.Speak(ctx, req, &out); err != nil || out.Len() == 0 || c.n.Load() != 1 {
		t.Errorf("gate open: Speak = %v, %d bytes, %d requests; want the audio from one", err, out.Len(), c.n.Load())
	}

	// A long text is many calls, fed to one ffmpeg started after the first: the gate
	// closing once the second reached the server stops the rest.
	c.n.Store(0)
	c.seen = func(n int32) { closed.Store(n >= 2) }
	long := providers.SpeechRequest{Voice: "nova", Text: strings.Repeat("Sentence after sentence, for a long text. ", 300), Format: "mp3", Speed: 1}
	calls := len(media.SplitText(long.Text, MaxInputChars))
	if err := s.Speak(ctx, long, io.Discard); !errors.Is(err, lost) {
		t.Errorf("gate closed after the second call: Speak = %v, want the gate's error", err)
	}
	if n := c.n.Load(); n != 2 || calls < 3 {
		t.Errorf("gate closed after the second call: %d of %d calls reached the server, want 2", n, calls)
	}
}

// Transcriptions and translations (and the diarizing model's calls) pass the gate too.
func TestTranscriptionCallsPassTheGate(t *testing.T) {
	lost := errors.New("lost")
	wav := speechWAV(t)
	for _, tt := range []struct {
		name      string
		model     string
		translate bool
	}{{"transcription", "", false}, {"translation", "", true}, {"diarized", diarizeModel, false}} {
		t.Run(tt.name, func(t *testing.T) {
			c := &counted{h: &fakeSTT{t: t, media: media.New(media.Config{}), arrived: make(chan struct{}, 100)}}
			srv := httptest.NewServer(c)
			t.Cleanup(srv.Close)
			tr := NewTranscriber(TranscriberConfig{APIKey: "sk-test", BaseURL: srv.URL + "/v1", Model: tt.model, TempDir: t.TempDir()})
			var closed atomic.Bool
			ctx := gateCtx(&closed, lost)

			closed.Store(true)
			if _, err := tr.send(ctx, wav, "audio.wav", 0, providers.TranscribeRequest{Language: "en", Translate: tt.translate}); !errors.Is(err, lost) {
				t.Errorf("gate closed: %v, want the gate's error", err)
			}
			if n := c.n.Load(); n != 0 {
				t.Errorf("gate closed: %d requests reached the server, want none", n)
			}

			closed.Store(false)
			got, err := tr.Transcribe(ctx, providers.TranscribeRequest{Path: wav, Language: "en", Translate: tt.translate})
			if err != nil || len(got.Segments) == 0 || c.n.Load() != 1 {
				t.Errorf("gate open: %d segments, %v, %d requests; want a transcript from one", len(got.Segments), err, c.n.Load())
			}
		})
	}
}
