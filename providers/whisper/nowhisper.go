//go:build !whisper

package whisper

import (
	"context"
	"fmt"

	"parla/providers"
)

// unbuilt stands in for whisper.cpp in a binary built without the `whisper` tag.
type unbuilt struct{}

func newModel(string) model { return unbuilt{} }

func (unbuilt) available() error {
	return fmt.Errorf("%w: whisper: %w", providers.ErrUnavailable, ErrNotBuilt)
}

func (u unbuilt) transcribe(context.Context, []float32, options, func(int)) ([]segment, string, error) {
	return nil, "", u.available()
}

func (u unbuilt) speech(context.Context, []float32, string) ([]span, error) {
	return nil, u.available()
}

func (unbuilt) Close() error { return nil }

// devices reports no device: there is no ggml in this binary.
func devices() ([]device, bool) { return nil, false }
