package whisper

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/testkit"
)

// speech makes a spoken English sentence with espeak-ng as WAV and returns its path and
// probed duration.
func speech(t testing.TB, r *media.Runner) (string, time.Duration) {
	t.Helper()
	espeak := testkit.Binary(t, "espeak-ng")
	testkit.Binary(t, "ffmpeg")
	testkit.Binary(t, "ffprobe")
	path := filepath.Join(t.TempDir(), "speech.wav")
	text := "Hello world. The quick brown fox jumps over the lazy dog."
	if out, err := exec.Command(espeak, "-w", path, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	info, err := r.Probe(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return path, info.Duration
}

// fakeModel stands in for whisper.cpp: it records what it was given, reports progress and
// returns fixed segments, or waits for cancellation.
type fakeModel struct {
	unavailable error
	segments    []segment
	spans       []span // what speech (Silero) finds
	lang        string
	err         error
	wait        bool   // block until the context is cancelled
	onCall      func() // called when transcription starts

	mu       sync.Mutex
	calls    int
	samples  int
	opts     options
	got      []float32 // the samples of the last call
	vadCalls int
}

func (f *fakeModel) available() error { return f.unavailable }

func (f *fakeModel) transcribe(ctx context.Context, samples []float32, o options, progress func(int)) ([]segment, string, error) {
	f.mu.Lock()
	f.calls++
	f.samples, f.opts, f.got = len(samples), o, samples
	f.mu.Unlock()
	if f.onCall != nil {
		f.onCall()
	}
	for _, p := range []int{0, 20, 20, 50, 40, 100} { // repeats and a step back, as callbacks may
		progress(p)
	}
	if f.wait {
		<-ctx.Done()
		return nil, "", ctx.Err()
	}
	for _, s := range f.segments {
		if o.partial != nil { // as whisper.cpp's segment callback
			o.partial(s.Text)
		}
	}
	return f.segments, f.lang, f.err
}

func (f *fakeModel) speech(ctx context.Context, samples []float32, vadModel string) ([]span, error) {
	f.mu.Lock()
	f.vadCalls++
	f.mu.Unlock()
	return f.spans, nil
}

func (f *fakeModel) Close() error { return nil }

// record collects progress reports.
type record struct {
	mu  sync.Mutex
	got []int
}

func (r *record) add(p int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, p)
}

func TestTranscribe(t *testing.T) {
	runner := media.New(media.Config{})
	path, dur := speech(t, runner)
	fake := &fakeModel{
		lang: "en",
		segments: []segment{
			{Start: 0, End: 1500 * time.Millisecond, Text: "Hello world."},
			// whisper's last segment may run to the end of its 30-second window
			{Start: 1500 * time.Millisecond, End: 30 * time.Second, Text: " The quick brown fox jumps over the lazy dog."},
		},
	}
	e := newEngine(Config{Threads: 3, Media: runner, VAD: VADOff}, fake)
	var progress record
	var pieces []string
	got, err := e.Transcribe(context.Background(), providers.TranscribeRequest{
		Path: path, Language: "en", Duration: dur, Progress: progress.add, Prompt: "Parla", Temperature: 0.3,
		Partial: func(text string) { pieces = append(pieces, text) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := dur.Seconds() * media.PCMRate
	if math.Abs(float64(fake.samples)-want) > 0.01*want {
		t.Errorf("model got %d samples, want %.0f ±1%%", fake.samples, want)
	}
	opts := fake.opts
	opts.partial = nil
	if want := (options{lang: "en", threads: 3, words: true, prompt: "Parla", temperature: 0.3}); fmt.Sprintf("%+v", opts) != fmt.Sprintf("%+v", want) {
		t.Errorf("model got %+v, want %+v", opts, want)
	}
	// A streamed answer's pieces: each segment's text as the model decodes it.
	if len(pieces) != 2 || pieces[0] != "Hello world." {
		t.Errorf("Partial got %q, want the model's two segments", pieces)
	}
	if d := got.Duration - time.Duration(fake.samples)*time.Second/media.PCMRate; d != 0 {
		t.Errorf("Duration %v is not the samples' length", got.Duration)
	}
	if got.Language != "english" {
		t.Errorf("Language = %q, want english", got.Language)
	}
	if got.Text != "Hello world. The quick brown fox jumps over the lazy dog." {
		t.Errorf("Text = %q", got.Text)
	}
	if len(got.Segments) != 2 || got.Segments[1].End != got.Duration {
		t.Errorf("Segments = %+v, want the last one ending at %v", got.Segments, got.Duration)
	}
	wantProgress := []int{0, 10, 28, 55, 99, 100}
	if !slices.Equal(progress.got, wantProgress) {
		t.Errorf("progress %v, want %v", progress.got, wantProgress)
	}
}

func TestTranscribeFailures(t *testing.T) {
	runner := media.New(media.Config{})
	path, dur := speech(t, runner)
	notAudio := filepath.Join(t.TempDir(), "video.mp4")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "color=s=64x64:d=1", notAudio).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	modelErr := errors.New("model exploded")
	tests := []struct {
		name     string
		model    *fakeModel
		path     string
		cancel   string // "before" the call, "during" transcription
		want     error
		wantCall bool
	}{
		{"unavailable", &fakeModel{unavailable: providers.ErrUnavailable}, path, "", providers.ErrUnavailable, false},
		{"no audio", &fakeModel{}, notAudio, "", media.ErrNoAudio, false},
		{"model error", &fakeModel{err: modelErr}, path, "", modelErr, true},
		{"cancelled before", &fakeModel{}, path, "before", context.Canceled, false},
		{"cancelled while transcribing", &fakeModel{wait: true}, path, "during", context.Canceled, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			switch tt.cancel {
			case "before":
				cancel()
			case "during":
				tt.model.onCall = cancel
			}
			e := newEngine(Config{Media: runner}, tt.model)
			_, err := e.Transcribe(ctx, providers.TranscribeRequest{Path: tt.path, Duration: dur})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if called := tt.model.calls > 0; called != tt.wantCall {
				t.Errorf("model called: %v, want %v", called, tt.wantCall)
			}
		})
	}
}

func TestAvailableWithoutTool(t *testing.T) {
	e := newEngine(Config{Media: media.New(media.Config{FFmpeg: "no-such-ffmpeg"})}, &fakeModel{})
	if err := e.Available(); !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), "no-such-ffmpeg") {
		t.Errorf("Available() = %v, want ErrUnavailable naming ffmpeg", err)
	}
}

func TestCheckModelFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, reason string
	}{
		{"not configured", "", "no model configured"},
		{"missing", filepath.Join(dir, "gone.bin"), "gone.bin"},
		{"directory", dir, dir},
		{"empty", write("empty.bin", ""), "too short"},
		{"not ggml", write("model.gguf", "GGUF and more"), "not a ggml whisper model"},
		{"ggml", write("ggml-tiny.bin", "lmgg\x98\xca\x00\x00"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkModelFile(tt.path)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("checkModelFile = %v", err)
				}
				return
			}
			if !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("checkModelFile = %v, want ErrUnavailable saying %q", err, tt.reason)
			}
		})
	}
	if path := testModel(); path != "" {
		if err := checkModelFile(path); err != nil {
			t.Errorf("whisper.cpp's test model: %v", err)
		}
	}
}

// testModel is whisper.cpp's test model shipped next to the repository, or WHISPER_MODEL,
// or "" when neither exists.
func testModel() string {
	if p := os.Getenv("WHISPER_MODEL"); p != "" {
		return p
	}
	p := filepath.Join("..", "..", "..", "shared", "testdata", "whisper", "for-tests-ggml-tiny.en.bin")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

func TestResult(t *testing.T) {
	segs := []providers.Segment{
		{Start: 0, End: 2 * time.Second, Text: " Hello."},
		{Start: 2 * time.Second, End: 2 * time.Second, Text: "こんにちは。"},
		{Start: 2500 * time.Millisecond, End: 30 * time.Second, Text: " Bye. "},
		{Start: 31 * time.Second, End: 32 * time.Second, Text: "Ghost."},
	}
	got := result(segs, "ja", 3*media.PCMRate+media.PCMRate/2)
	want := providers.Transcript{
		Language: "japanese",
		Duration: 3500 * time.Millisecond,
		Text:     "Hello.こんにちは。 Bye. Ghost.",
		Segments: []providers.Segment{
			segs[0], segs[1],
			{Start: 2500 * time.Millisecond, End: 3500 * time.Millisecond, Text: " Bye. "},
			{Start: 3500 * time.Millisecond, End: 3500 * time.Millisecond, Text: "Ghost."},
		},
	}
	if got.Language != want.Language || got.Duration != want.Duration || got.Text != want.Text || !reflect.DeepEqual(got.Segments, want.Segments) {
		t.Errorf("result =\n%+v\nwant\n%+v", got, want)
	}
	if empty := result(nil, "xx", 0); empty.Language != "xx" || empty.Text != "" || empty.Duration != 0 || empty.Segments == nil {
		t.Errorf("result of nothing = %+v", empty)
	}
}

func TestPadded(t *testing.T) {
	short := []float32{0.5, -0.5}
	got := padded(short)
	if len(got) != minSamples || got[0] != 0.5 || got[1] != -0.5 || got[minSamples-1] != 0 {
		t.Errorf("padded short clip: %d samples", len(got))
	}
	long := make([]float32, 2*media.PCMRate)
	if got := padded(long); len(got) != len(long) {
		t.Errorf("padded long clip: %d samples, want %d", len(got), len(long))
	}
}

// ggmlFile writes a model file header with the given vocabulary size (51864: English-only).
func ggmlFile(t testing.TB, vocab uint32) string {
	p := filepath.Join(t.TempDir(), fmt.Sprintf("ggml-%d.bin", vocab))
	head := []byte("lmgg\x00\x00\x00\x00")
	binary.LittleEndian.PutUint32(head[4:], vocab)
	if err := os.WriteFile(p, head, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Speech 10 s into the file, after silence: the model hears only the speech and the
// transcript's times are on the file's clock, words included.
func TestVADKeepsTheOriginalClock(t *testing.T) {
	path, total, spoken := speechAfter(t, 10*time.Second, 5*time.Second)
	ms := time.Millisecond
	// On the spliced clock the speech starts at the rule's padding (0.3 s).
	fake := &fakeModel{lang: "en", segments: []segment{{Start: 300 * ms, End: 1300 * ms, Text: " Hello world.",
		Tokens: []token{{Text: "[_BEG_]", Special: true}, {Text: " Hello", Start: 300 * ms, End: 700 * ms}, {Text: " world.", Start: 700 * ms, End: 1300 * ms}}}}}
	e := newEngine(Config{Media: media.New(media.Config{})}, fake)
	got, err := e.Transcribe(context.Background(), providers.TranscribeRequest{Path: path, Duration: total})
	if err != nil {
		t.Fatal(err)
	}
	heard := time.Duration(fake.samples) * time.Second / media.PCMRate
	if heard > spoken+time.Second || heard < spoken {
		t.Errorf("the model heard %v of a %v file with %v of speech", heard, total, spoken)
	}
	if len(got.Segments) != 1 {
		t.Fatalf("segments %+v", got.Segments)
	}
	s := got.Segments[0]
	if d := s.Start - 10*time.Second; d < -100*ms || d > 100*ms {
		t.Errorf("segment starts at %v, want about 10s", s.Start)
	}
	if s.End-s.Start != time.Second {
		t.Errorf("segment %v–%v, want 1s long", s.Start, s.End)
	}
	wantWords := []providers.Word{{Start: s.Start, End: s.Start + 400*ms, Text: " Hello"}, {Start: s.Start + 400*ms, End: s.End, Text: " world."}}
	if !reflect.DeepEqual(s.Words, wantWords) {
		t.Errorf("words %+v, want %+v", s.Words, wantWords)
	}
	if got.Duration < total-50*ms {
		t.Errorf("Duration %v, want the whole file's %v", got.Duration, total)
	}
}

func TestVADModes(t *testing.T) {
	runner := media.New(media.Config{})
	path, total, _ := speechAfter(t, 2*time.Second, 2*time.Second)
	silent := filepath.Join(t.TempDir(), "silence.wav")
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "anullsrc=r=16000:cl=mono:d=4", silent)
	sec := media.PCMRate
	vad := ggmlFile(t, 10)
	tests := []struct {
		name     string
		cfg      Config
		path     string
		spans    []span
		samples  int // want the model given this many, ±0.1 s; 0: not called
		vadCalls int
	}{
		{"off: everything", Config{VAD: VADOff}, path, nil, int(total.Seconds() * float64(sec)), 0},
		{"silence: no speech, no model", Config{VAD: VADSilence}, silent, nil, 0, 0},
		{"silero: its spans, padded", Config{VAD: VADSilero, VADModel: vad}, path,
			[]span{{2 * sec, 3 * sec}, {4 * sec, 5 * sec}}, 2*sec + 4*defaultSilence.pad + spliceGap, 1},
		{"silero finds nothing", Config{VAD: VADSilero, VADModel: vad}, path, nil, 0, 1},
		{"auto with the Silero model: silero", Config{VADModel: vad}, path,
			[]span{{2 * sec, 3 * sec}}, sec + 2*defaultSilence.pad, 1},
		{"auto without it: silence", Config{VADModel: filepath.Join(t.TempDir(), "none.bin")}, silent, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeModel{spans: tt.spans, segments: []segment{{Start: 0, End: time.Second, Text: " Invented."}}}
			tt.cfg.Media = runner
			e := newEngine(tt.cfg, fake)
			got, err := e.Transcribe(context.Background(), providers.TranscribeRequest{Path: tt.path})
			if err != nil {
				t.Fatal(err)
			}
			if fake.vadCalls != tt.vadCalls {
				t.Errorf("Silero called %d times, want %d", fake.vadCalls, tt.vadCalls)
			}
			if tt.samples == 0 {
				if fake.calls != 0 || len(got.Segments) != 0 || got.Text != "" {
					t.Errorf("no speech, but the model was called %d times: %+v", fake.calls, got)
				}
				return
			}
			if d := fake.samples - tt.samples; d < -sec/10 || d > sec/10 {
				t.Errorf("model got %d samples, want %d", fake.samples, tt.samples)
			}
		})
	}
}

func TestVADConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg    Config
		reason string
	}{
		{Config{VAD: VADSilero}, "set WHISPER_VAD_MODEL"},
		{Config{VAD: VADSilero, VADModel: "/nonexistent/silero.bin"}, "/nonexistent/silero.bin"},
		{Config{VAD: "magic"}, `unknown VAD mode "magic"`},
	} {
		err := newEngine(tt.cfg, &fakeModel{}).Available()
		if !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("%+v: Available() = %v, want ErrUnavailable saying %q", tt.cfg, err, tt.reason)
		}
	}
}

func TestTranslate(t *testing.T) {
	runner := media.New(media.Config{})
	path, dur := speech(t, runner)
	req := providers.TranscribeRequest{Path: path, Duration: dur, Translate: true, Language: "es"}

	english := &fakeModel{}
	e := newEngine(Config{Model: ggmlFile(t, 51864), Media: runner}, english)
	if err := e.Translates(); !errors.Is(err, ErrEnglishOnly) {
		t.Errorf("Translates() = %v, want ErrEnglishOnly", err)
	}
	if _, err := e.Transcribe(context.Background(), req); !errors.Is(err, ErrEnglishOnly) || english.calls != 0 {
		t.Errorf("translating with an English-only model: %v, %d model calls", err, english.calls)
	}

	multi := &fakeModel{lang: "es", segments: []segment{{Start: 0, End: time.Second, Text: " Hello."}}}
	e = newEngine(Config{Model: ggmlFile(t, 51865), Media: runner, NoWords: true}, multi)
	if err := e.Translates(); err != nil {
		t.Errorf("Translates() = %v", err)
	}
	got, err := e.Transcribe(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !multi.opts.translate || multi.opts.lang != "es" || multi.opts.words {
		t.Errorf("model options %+v, want translate from es without words", multi.opts)
	}
	if got.Language != "english" || !got.Translated || got.Segments[0].Words != nil {
		t.Errorf("translation %+v, want english without words", got)
	}
}

func TestMultilingual(t *testing.T) {
	for vocab, want := range map[uint32]bool{51864: false, 51865: true, 51866: true} {
		if got, err := multilingual(ggmlFile(t, vocab)); err != nil || got != want {
			t.Errorf("vocabulary %d: multilingual = %v, %v; want %v", vocab, got, err, want)
		}
	}
	if _, err := multilingual(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file is multilingual")
	}
	if p := testModel(); p != "" {
		if multi, err := multilingual(p); err != nil || multi {
			t.Errorf("tiny.en test model: multilingual = %v, %v", multi, err)
		}
	}
}
