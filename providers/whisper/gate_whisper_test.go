//go:build whisper

package whisper

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"parla/media"
)

// countingGate is a process gate that counts its checks and refuses from the refuseAt-th
// on (0: never).
func countingGate(refuseAt int64) (context.Context, *atomic.Int64, error) {
	lost := errors.New("lost")
	var checks atomic.Int64
	ctx := media.WithProcessGate(context.Background(), func() error {
		if n := checks.Add(1); refuseAt > 0 && n >= refuseAt {
			return lost
		}
		return nil
	})
	return ctx, &checks, lost
}

// whisper.cpp asks the gate before each 30-second window it encodes, and Silero before each
// minute of audio: a gate that closes stops the model at the next one, with the gate's
// error; an open gate is asked once per window and changes nothing.
func TestWhisperAsksTheGate(t *testing.T) {
	e, _ := realEngine(t, VADSilero)
	samples := make([]float32, 70*media.PCMRate) // three windows, two Silero chunks
	o := options{threads: e.threads}
	for _, tt := range []struct {
		name     string
		refuseAt int64
		checks   int64 // whisper.cpp's windows and Silero's chunks begun, +1 when refused
	}{
		{"closed from the start: no window", 1, 1},
		{"closed after the first window", 2, 2},
		{"open", 0, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, checks, lost := countingGate(tt.refuseAt)
			_, _, err := e.model.transcribe(ctx, samples, o, func(int) {})
			if tt.refuseAt > 0 && !errors.Is(err, lost) || tt.refuseAt == 0 && err != nil {
				t.Errorf("whisper: err = %v", err)
			}
			// A window seeks at most 30 s, so 70 s takes three or more.
			if n := checks.Load(); n != tt.checks && !(tt.refuseAt == 0 && n > tt.checks) {
				t.Errorf("whisper asked the gate %d times, want %d", n, tt.checks)
			}

			ctx, checks, lost = countingGate(tt.refuseAt)
			_, err = e.model.speech(ctx, samples, e.vadModel)
			if tt.refuseAt > 0 && !errors.Is(err, lost) || tt.refuseAt == 0 && err != nil {
				t.Errorf("Silero: err = %v", err)
			}
			if want := min(tt.checks, 2); checks.Load() != want {
				t.Errorf("Silero asked the gate %d times, want %d", checks.Load(), want)
			}
		})
	}
}
