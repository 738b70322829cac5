//go:build whisper

package whisper

/*
#cgo LDFLAGS: -lwhisper -lggml -lggml-base -lggml-cpu -lm -lstdc++
#cgo linux LDFLAGS: -fopenmp
#include <stdio.h>
#include <stdlib.h>
#include <whisper.h>
#include <ggml-backend.h>

// whisper.cpp and ggml log every step of every load and run (hundreds of lines a job) to
// stderr; only their errors are worth the server's log.
static void parla_log(enum ggml_log_level level, const char * text, void * user_data) {
	if (level == GGML_LOG_LEVEL_ERROR) {
		fputs(text, stderr);
	}
}

static void parla_quiet_logs(void) {
	whisper_log_set(parla_log, NULL);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"

	cpp "github.com/ggerganov/whisper.cpp/bindings/go/pkg/whisper"

	"parla/media"
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
	vadOnce sync.Once
	vad     *C.struct_whisper_vad_context
	vadErr  error

	// failed is set once loading has failed, so Available closes the service from then on
	// without waiting for (or racing with) a load in progress.
	failed atomic.Pointer[error]
}

func newModel(path string) model {
	quietLogs.Do(func() { C.parla_quiet_logs() })
	return &cppModel{path: path}
}

var quietLogs sync.Once

// devices lists the compute devices ggml registered in this build (the CPU, and in a CUDA
// build each GPU the driver shows), once: listing them starts the CUDA runtime.
var devices = sync.OnceValues(func() ([]device, bool) {
	n := int(C.ggml_backend_dev_count())
	out := make([]device, 0, n)
	for i := range n {
		d := C.ggml_backend_dev_get(C.size_t(i))
		t := C.ggml_backend_dev_type(d)
		out = append(out, device{
			name:        C.GoString(C.ggml_backend_dev_name(d)),
			description: C.GoString(C.ggml_backend_dev_description(d)),
			gpu:         t == C.GGML_BACKEND_DEVICE_TYPE_GPU || t == C.GGML_BACKEND_DEVICE_TYPE_IGPU,
		})
	}
	return out, true
})

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

func (m *cppModel) transcribe(ctx context.Context, samples []float32, o options, progress func(int)) ([]segment, string, error) {
	if len(samples) == 0 {
		return nil, "", errors.New("no samples")
	}
	wm, err := m.load()
	if err != nil {
		return nil, "", err
	}
	if err := m.take(ctx); err != nil {
		return nil, "", err
	}
	defer func() { <-turn }()

	wc, err := wm.NewContext()
	if err != nil {
		return nil, "", fmt.Errorf("new context: %w", err)
	}
	wc.SetThreads(uint(o.threads))
	// Per-token times give the words their own times (see words.go).
	wc.SetTokenTimestamps(o.words)
	if o.prompt != "" {
		wc.SetInitialPrompt(o.prompt)
	}
	if o.temperature > 0 {
		wc.SetTemperature(float32(o.temperature))
	}
	// An English-only model refuses any language setting (ErrModelNotMultilingual) and has
	// no translate task; the engine checks the latter before it gets here.
	if wm.IsMultilingual() {
		lang := o.lang
		if lang == "" {
			lang = "auto"
		}
		if err := wc.SetLanguage(lang); err != nil {
			return nil, "", fmt.Errorf("language %q: %w", lang, err)
		}
		wc.SetTranslate(o.translate)
	} else if o.translate {
		return nil, "", ErrEnglishOnly
	}
	// whisper.cpp asks before encoding each 30-second window whether to go on: a cancelled
	// job, or one whose process gate refuses, stops there. It then returns success, so the
	// reason is kept here.
	var stopped error
	keepGoing := func() bool {
		stopped = proceed(ctx)
		return stopped == nil
	}
	if err := wc.Process(samples, keepGoing, segmentCallback(o.partial), progress); err != nil {
		return nil, "", fmt.Errorf("processing: %w", err)
	}
	if stopped != nil {
		return nil, "", stopped
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

// segmentCallback passes each new segment's text to partial; none without one, since the
// bindings decode in single-segment mode (a segment per 30-second window) when given one.
func segmentCallback(partial func(string)) cpp.SegmentCallback {
	if partial == nil {
		return nil
	}
	return func(s cpp.Segment) { partial(s.Text) }
}

// take waits for the model's turn, or gives up when ctx ends.
func (m *cppModel) take(ctx context.Context) error {
	select {
	case turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readSegments collects the segments of the last Process, with their tokens.
func readSegments(wc cpp.Context) ([]segment, error) {
	var out []segment
	for {
		s, err := wc.NextSegment()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading segment %d: %w", len(out), err)
		}
		seg := segment{Start: s.Start, End: s.End, Text: s.Text}
		for _, t := range s.Tokens {
			seg.Tokens = append(seg.Tokens, token{Text: t.Text, Start: t.Start, End: t.End, Special: !wc.IsText(t)})
		}
		out = append(out, seg)
	}
}

// vadChunk is how much audio Silero looks at in one call: between calls a cancelled job
// stops (one call cannot be interrupted) and the spans found are merged.
const vadChunk = 60 * media.PCMRate

// speech runs whisper.cpp's Silero VAD over samples with its default thresholds (0.5,
// speech ≥ 250 ms, silence ≥ 100 ms, 30 ms padding) through its C API: the bindings only
// offer it inside Process, where the token times it yields stay on the cut audio's clock.
func (m *cppModel) speech(ctx context.Context, samples []float32, vadModel string) ([]span, error) {
	vctx, err := m.loadVAD(vadModel)
	if err != nil {
		return nil, err
	}
	if err := m.take(ctx); err != nil {
		return nil, err
	}
	defer func() { <-turn }()
	var spans []span
	for off := 0; off < len(samples); off += vadChunk {
		if err := proceed(ctx); err != nil {
			return nil, err
		}
		chunk := samples[off:min(off+vadChunk, len(samples))]
		found, err := vadSpans(vctx, chunk)
		if err != nil {
			return nil, err
		}
		for _, s := range found {
			spans = append(spans, span{s.start + off, s.end + off})
		}
	}
	// A stretch cut at a chunk's end meets its rest at the next one's start.
	return padSpans(spans, 0, len(samples)), nil
}

// vadSpans runs Silero over one chunk of samples.
func vadSpans(vctx *C.struct_whisper_vad_context, samples []float32) ([]span, error) {
	if len(samples) == 0 {
		return nil, nil
	}
	segs := C.whisper_vad_segments_from_samples(vctx, C.whisper_vad_default_params(),
		(*C.float)(unsafe.Pointer(&samples[0])), C.int(len(samples)))
	if segs == nil {
		return nil, errors.New("whisper.cpp VAD failed")
	}
	defer C.whisper_vad_free_segments(segs)
	n := int(C.whisper_vad_segments_n_segments(segs))
	out := make([]span, 0, n)
	for i := range n {
		// Times come in centiseconds.
		t0 := float64(C.whisper_vad_segments_get_segment_t0(segs, C.int(i)))
		t1 := float64(C.whisper_vad_segments_get_segment_t1(segs, C.int(i)))
		s := span{int(t0 * media.PCMRate / 100), min(int(t1*media.PCMRate/100), len(samples))}
		if s.end > s.start {
			out = append(out, s)
		}
	}
	return out, nil
}

// loadVAD reads the Silero model once, to run on one thread: its graphs are so small that
// a second thread gains 15% on an idle machine (83 s of audio: 117 ms against 141 ms) and
// loses 5× on a busy one (2.2 s against 0.44 s), where the threads wait for each other;
// whisper.cpp's own default, 4, is slower still on 2 cores.
func (m *cppModel) loadVAD(path string) (*C.struct_whisper_vad_context, error) {
	m.vadOnce.Do(func() {
		params := C.whisper_vad_default_context_params()
		params.n_threads = 1
		cpath := C.CString(path)
		defer C.free(unsafe.Pointer(cpath))
		m.vad = C.whisper_vad_init_from_file_with_params(cpath, params)
		if m.vad == nil {
			m.vadErr = fmt.Errorf("%w: whisper: loading VAD model %s failed", providers.ErrUnavailable, path)
		}
	})
	return m.vad, m.vadErr
}

// Close frees the weights, if they were loaded, once the running transcription is done.
func (m *cppModel) Close() error {
	turn <- struct{}{}
	defer func() { <-turn }()
	m.once.Do(func() {}) // no load may start after Close
	m.vadOnce.Do(func() {})
	if m.vad != nil {
		C.whisper_vad_free(m.vad)
		m.vad = nil
	}
	if m.loaded == nil {
		return nil
	}
	return m.loaded.Close()
}
