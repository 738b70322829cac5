package whisper

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"parla/media"
	"parla/providers"
)

// The model runs in this process, where the process gate cannot stop it as it stops ffmpeg:
// a runner whose gate closes while ffmpeg decodes (its lease lapsed: another node may
// take the order over) starts no model work, neither Silero nor whisper.cpp, and ends with
// the gate's error; an open gate changes nothing. (The check before each window inside
// whisper.cpp is cgo_whisper.go's, tested with -tags whisper: TestWhisperAsksTheGate.)
func TestTranscribeStopsAtTheGate(t *testing.T) {
	runner := media.New(media.Config{})
	path, dur := speech(t, runner)
	lost := errors.New("lost")
	for _, closes := range []bool{true, false} {
		fake := &fakeModel{lang: "en", spans: []span{{0, media.PCMRate}}, segments: []segment{{End: 1e9, Text: " Hello."}}}
		e := newEngine(Config{Media: runner, VAD: VADSilero, VADModel: ggmlFile(t, 10)}, fake)
		var closed atomic.Bool
		ctx := media.WithProcessGate(context.Background(), func() error {
			if closed.Load() {
				return lost
			}
			return nil
		})
		got, err := e.Transcribe(ctx, providers.TranscribeRequest{Path: path, Duration: dur, Progress: func(p int) {
			// decoding done (decodeShare): the lease lapses now
			closed.Store(closes && p >= decodeShare)
		}})
		if closes {
			if !errors.Is(err, lost) {
				t.Errorf("gate closed after decoding: err = %v, want the gate's", err)
			}
			if fake.vadCalls != 0 || fake.calls != 0 {
				t.Errorf("gate closed after decoding: Silero called %d times, whisper %d, want none", fake.vadCalls, fake.calls)
			}
			continue
		}
		if err != nil || got.Text != "Hello." || fake.vadCalls != 1 || fake.calls != 1 {
			t.Errorf("gate open: %q, %v; Silero %d calls, whisper %d; want the transcript, one call each", got.Text, err, fake.vadCalls, fake.calls)
		}
	}
}
