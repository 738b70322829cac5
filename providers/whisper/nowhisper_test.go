//go:build !whisper

package whisper

import (
	"context"
	"errors"
	"strings"
	"testing"

	"parla/providers"
)

func TestUnavailableWithoutTag(t *testing.T) {
	e := New(Config{Model: testModel()})
	err := e.Available()
	if !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), "built without whisper (rebuild with -tags whisper and libwhisper)") {
		t.Fatalf("Available() = %v", err)
	}
	if _, err := e.Transcribe(context.Background(), providers.TranscribeRequest{Path: "any.mp3"}); !errors.Is(err, providers.ErrUnavailable) {
		t.Errorf("Transcribe err = %v, want ErrUnavailable", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
