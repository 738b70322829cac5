//go:build whisper

package whisper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	cpp "github.com/ggerganov/whisper.cpp/bindings/go/pkg/whisper"

	"parla/providers"
)

// turn lets one transcription at a time into whisper.cpp. A bindings Context is only a set
// of parameters: every Process runs on the model's single decoding state, and the bindings
// keep their callbacks in unsynchronised package-level maps, so concurrent calls would mix
// up results even across models. Jobs queue here instead (and give up when cancelled).
var turn = make(chan struct{}, 1)

// cppModel runs whisper.cpp in-process. The weights are loaded on the first transcription
// and kept until Close.
type cppModel struct {
	path string

	once    sync.Once
	loaded  cpp.Model
	loadErr error
	// failed is set once loading has failed, so Available closes the service from then on
	// without waiting for (or racing with) a load in progress.
	failed atomic.Pointer[error]
}

func newModel(path string) model { return &cppModel{path: path} }

func (m *cppModel) available() error {
	if err := checkModelFile(m.path); err != nil {
		return err
	}
	if err := m.failed.Load(); err != nil {
		return *err
	}
	return nil
}

// load reads the weights once; every later call returns the same model or error.
func (m *cppModel) load() (cpp.Model, error) {
	m.once.Do(func() {
		m.loaded, m.loadErr = cpp.New(m.path)
		if m.loadErr != nil {
			m.loadErr = fmt.Errorf("%w: whisper: loading model %s: %v", providers.ErrUnavailable, m.path, m.loadErr)
			m.failed.Store(&m.loadErr)
		}
	})
	return m.loaded, m.loadErr
}

func (m *cppModel) transcribe(ctx context.Context, samples []float32, lang string, threads int, progress func(int)) ([]providers.Segment, string, error) {
	if len(samples) == 0 {
		return nil, "", errors.New("no samples")
	}
	wm, err := m.load()
	if err != nil {
		return nil, "", err
	}
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	defer func() { <-turn }()

	wc, err := wm.NewContext()
	if err != nil {
		return nil, "", fmt.Errorf("new context: %w", err)
	}
	wc.SetThreads(uint(threads))
	// Segment times are all the renderers use; per-token times cost decoding time.
	wc.SetTokenTimestamps(false)
	// An English-only model refuses any language setting (ErrModelNotMultilingual).
	if wm.IsMultilingual() {
		if lang == "" {
			lang = "auto"
		}
		if err := wc.SetLanguage(lang); err != nil {
			return nil, "", fmt.Errorf("language %q: %w", lang, err)
		}
	}
	// whisper.cpp asks before encoding each 30-second window whether to go on: a cancelled
	// job stops there. It then returns success, so the caller checks ctx itself.
	keepGoing := func() bool { return ctx.Err() == nil }
	if err := wc.Process(samples, keepGoing, nil, progress); err != nil {
		return nil, "", fmt.Errorf("processing: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	segments, err := readSegments(wc)
	if err != nil {
		return nil, "", err
	}
	return segments, wc.DetectedLanguage(), nil
}

// readSegments collects the segments of the last Process.
func readSegments(wc cpp.Context) ([]providers.Segment, error) {
	var out []providers.Segment
	for {
		s, err := wc.NextSegment()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading segment %d: %w", len(out), err)
		}
		out = append(out, providers.Segment{Start: s.Start, End: s.End, Text: s.Text})
	}
}

// Close frees the weights, if they were loaded, once the running transcription is done.
func (m *cppModel) Close() error {
	turn <- struct{}{}
	defer func() { <-turn }()
	m.once.Do(func() {}) // no load may start after Close
	if m.loaded == nil {
		return nil
	}
	return m.loaded.Close()
}
