//go:build whisper

package whisper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/testkit"
)

// These tests run whisper.cpp itself, on its test model (placeholder weights: it runs the
// whole inference path about as fast as the real tiny.en model but says nothing useful,
// usually no segment at all) and the real Silero VAD model. They prove the cgo layer and the
// plumbing; set WHISPER_MODEL to a real model to check what a transcript says.

// realEngine returns an engine on the test model (or WHISPER_MODEL) with the given VAD mode;
// missing models skip the test outside CI and fail it in CI.
func realEngine(t testing.TB, vad string) (*Engine, *media.Runner) {
	t.Helper()
	path := testModel()
	if path == "" {
		testkit.Missing(t, "no whisper model: set WHISPER_MODEL or provide ../shared/testdata/whisper/for-tests-ggml-tiny.en.bin")
	}
	cfg := Config{Model: path, Threads: min(runtime.NumCPU(), 4), Media: media.New(media.Config{}), VAD: vad}
	if vad == VADSilero {
		cfg.VADModel = testVADModel(t)
	}
	e := New(cfg)
	t.Cleanup(func() { e.Close() })
	if err := e.Available(); err != nil {
		t.Fatalf("Available() = %v", err)
	}
	return e, cfg.Media
}

// testVADModel is the Silero VAD model shipped next to the repository, or WHISPER_VAD_MODEL.
func testVADModel(t testing.TB) string {
	if p := os.Getenv("WHISPER_VAD_MODEL"); p != "" {
		return p
	}
	p := filepath.Join("..", "..", "..", "shared", "testdata", "whisper", "for-tests-silero-v6.2.0-ggml.bin")
	if _, err := os.Stat(p); err != nil {
		testkit.Missing(t, "no Silero VAD model: set WHISPER_VAD_MODEL or provide "+p)
	}
	return p
}

// checkTranscript asserts what holds whatever the model says: times within the audio and in
// order, words that make up their segment, no control tokens or blank markers.
func checkTranscript(t *testing.T, got providers.Transcript) {
	t.Helper()
	for i, s := range got.Segments {
		if s.Start < 0 || s.End < s.Start || s.End > got.Duration {
			t.Errorf("segment %d: %v–%v outside the audio (%v)", i, s.Start, s.End, got.Duration)
		}
		var joined strings.Builder
		for j, w := range s.Words {
			if w.Start < s.Start || w.End < w.Start || w.End > s.End {
				t.Errorf("segment %d word %d %q: %v–%v outside %v–%v", i, j, w.Text, w.Start, w.End, s.Start, s.End)
			}
			if isSpecial(w.Text) {
				t.Errorf("segment %d: control token %q as a word", i, w.Text)
			}
			joined.WriteString(w.Text)
		}
		if s.Words != nil && strings.TrimSpace(joined.String()) != strings.TrimSpace(s.Text) {
			t.Errorf("segment %d: words %q do not make up %q", i, joined.String(), s.Text)
		}
	}
}

// TestBackendNamesTheDevice checks what the startup log and /readyz say: the CPU in the
// default build; with WHISPER_EXPECT_BACKEND=CUDA (.ci/gpu-check.sh on a GPU machine) the
// CUDA build must have found the GPU, not fallen back to the CPU.
func TestBackendNamesTheDevice(t *testing.T) {
	e := New(Config{Threads: 3})
	got := e.Backend()
	want := os.Getenv("WHISPER_EXPECT_BACKEND")
	if want == "" {
		want = "CPU, 3 threads"
	}
	if !strings.HasPrefix(got, want) {
		t.Errorf("Backend() = %q, want it to start with %q", got, want)
	}
	t.Logf("whisper computes on %s", got)
}

func TestWhisperTranscribes(t *testing.T) {
	e, runner := realEngine(t, VADOff)
	path, dur := speech(t, runner)
	var progress record
	got, err := e.Transcribe(context.Background(), providers.TranscribeRequest{
		Path: path, Duration: dur, Progress: progress.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Duration - dur; d < -50*time.Millisecond || d > 50*time.Millisecond {
		t.Errorf("Duration %v, want %v", got.Duration, dur)
	}
	if got.Language != "english" {
		t.Errorf("Language %q, want english", got.Language)
	}
	checkTranscript(t, got)
	if n := len(progress.got); n == 0 || progress.got[n-1] != 100 {
		t.Errorf("progress %v does not end at 100", progress.got)
	}
	// A real model (WHISPER_MODEL) must hear the words, with word times.
	if os.Getenv("WHISPER_MODEL") != "" {
		if !strings.Contains(strings.ToLower(got.Text), "world") {
			t.Errorf("Text %q does not contain \"world\"", got.Text)
		}
		if len(got.Segments) == 0 || len(got.Segments[0].Words) < 2 {
			t.Errorf("no word timings: %+v", got.Segments)
		}
	}
	t.Logf("%d segments, text %q", len(got.Segments), got.Text)
}

// whisper.cpp's Silero VAD through the C API finds the speech 10 s into the file, and a job
// with it runs through; with a real model the segments start near 10 s.
func TestWhisperSileroVAD(t *testing.T) {
	e, _ := realEngine(t, VADSilero)
	path, total, spoken := speechAfter(t, 10*time.Second, 5*time.Second)
	samples, err := e.media.DecodePCM(context.Background(), path, total, 0)
	if err != nil {
		t.Fatal(err)
	}
	spans, err := e.model.speech(context.Background(), samples, e.vadModel)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) == 0 {
		t.Fatal("Silero found no speech")
	}
	start, end := samplesToTime(spans[0].start), samplesToTime(spans[len(spans)-1].end)
	t.Logf("Silero: %d spans, speech %v–%v (espeak-ng spoke %v–%v)", len(spans), start, end, 10*time.Second, 10*time.Second+spoken)
	if d := start - 10*time.Second; d < -300*time.Millisecond || d > 500*time.Millisecond {
		t.Errorf("speech starts at %v, want about 10s", start)
	}
	if d := end - 10*time.Second - spoken; d < -time.Second || d > 500*time.Millisecond {
		t.Errorf("speech ends at %v, want about %v", end, 10*time.Second+spoken)
	}
	got, err := e.Transcribe(context.Background(), providers.TranscribeRequest{Path: path, Duration: total})
	if err != nil {
		t.Fatal(err)
	}
	checkTranscript(t, got)
	if os.Getenv("WHISPER_MODEL") != "" {
		if len(got.Segments) == 0 || got.Segments[0].Start < 9500*time.Millisecond {
			t.Errorf("segments %+v, want the first near 10s", got.Segments)
		}
	}
}

// The test model is English-only (tiny.en): a translation is refused before any work, and
// the model itself refuses it too should a caller get past the engine.
func TestWhisperTranslateEnglishOnly(t *testing.T) {
	e, runner := realEngine(t, VADOff)
	if err := e.Translates(); !errors.Is(err, ErrEnglishOnly) {
		t.Fatalf("Translates() = %v, want ErrEnglishOnly", err)
	}
	path, dur := speech(t, runner)
	if _, err := e.Transcribe(context.Background(), providers.TranscribeRequest{Path: path, Duration: dur, Translate: true}); !errors.Is(err, ErrEnglishOnly) {
		t.Errorf("Transcribe with Translate = %v, want ErrEnglishOnly", err)
	}
	samples := make([]float32, 2*media.PCMRate)
	if _, _, err := e.model.transcribe(context.Background(), samples, options{threads: 1, translate: true}, func(int) {}); !errors.Is(err, ErrEnglishOnly) {
		t.Errorf("model.transcribe with translate = %v, want ErrEnglishOnly", err)
	}
}

// benchAudio is espeak-ng speech with silence around it (5 s before, 8 s after), three times
// over: about 83 s of which about 20 s are speech, as a 16 kHz mono WAV.
func benchAudio(b *testing.B) (string, time.Duration) {
	dir := b.TempDir()
	clip := testkit.Speech(b, dir, "speech.wav", "Hello world. The quick brown fox jumps over the lazy dog. "+
		"Parla turns speech into text for anyone who pays for it, and it should never charge for silence. "+
		"This sentence is here to make the clip a little longer, so the encoder has real work to do.")
	ffmpeg := testkit.Binary(b, "ffmpeg")
	once := filepath.Join(dir, "once.wav")
	testkit.Run(b, ffmpeg, "-nostdin", "-loglevel", "error", "-i", clip, "-af", "adelay=5000:all=1,apad=pad_dur=8",
		"-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", once)
	wav := filepath.Join(dir, "bench.wav")
	testkit.Run(b, ffmpeg, "-nostdin", "-loglevel", "error", "-stream_loop", "2", "-i", once, "-c", "copy", wav)
	info, err := media.New(media.Config{}).Probe(context.Background(), wav)
	if err != nil {
		b.Fatal(err)
	}
	return wav, info.Duration
}

// BenchmarkVersusWhisperCLI runs our whole job (decode, find speech, model, words) and
// whisper.cpp's own whisper-cli (WHISPER_CLI, or on PATH; `make whisper-bench` builds it from
// the same source) on the same WAV, model and threads, alternating, and reports both and
// their ratio. Both decode greedily (-bs 1; whisper-cli's default is a 5-beam search) with
// timestamp tokens (no -nt, which switches them off in the decoder and changes its work) and
// token timestamps on (-ojf), as the engine does.
//
//	vad=off      the whole audio
//	vad=silero   whisper.cpp's Silero VAD (whisper-cli --vad)
//	vad=silence  our silence rule (whisper-cli gets the whole audio: it has no such rule)
func BenchmarkVersusWhisperCLI(b *testing.B) {
	cli := os.Getenv("WHISPER_CLI")
	if cli == "" {
		var err error
		if cli, err = exec.LookPath("whisper-cli"); err != nil {
			b.Skip("whisper-cli is not on PATH and WHISPER_CLI is not set (make whisper-bench)")
		}
	}
	wav, dur := benchAudio(b)
	vadModel := testVADModel(b)
	for _, mode := range []string{VADOff, VADSilero, VADSilence} {
		b.Run("vad="+mode, func(b *testing.B) {
			e, _ := realEngine(b, mode)
			out := filepath.Join(b.TempDir(), "cli")
			args := []string{"-m", e.modelPath, "-t", strconv.Itoa(e.threads), "-bs", "1", "-np", "-ojf", "-of", out, "-f", wav}
			if mode == VADSilero {
				args = append(args, "--vad", "-vm", vadModel)
			}
			// Load the weights once on both sides: whisper-cli loads them on every run (about
			// 0.1 s for tiny), the engine once per process.
			if _, err := e.Transcribe(context.Background(), providers.TranscribeRequest{Path: wav, Duration: dur}); err != nil {
				b.Fatal(err)
			}
			// Wall time, and CPU time (less sensitive to other work on a shared machine): the
			// engine's is this process's and its ffmpeg's, whisper-cli's its own. The ratios are
			// the medians of each round's, so a burst of load on one side weighs once.
			var ours, theirs time.Duration
			var wallRatios, cpuRatios []float64
			for b.Loop() {
				start, cpu := time.Now(), cpuTime()
				if _, err := e.Transcribe(context.Background(), providers.TranscribeRequest{Path: wav, Duration: dur}); err != nil {
					b.Fatal(err)
				}
				wall, used := time.Since(start), cpuTime()-cpu
				start = time.Now()
				cmd := exec.Command(cli, args...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("whisper-cli: %v: %s", err, out)
				}
				cliWall := time.Since(start)
				cliUsed := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				ours, theirs = ours+wall, theirs+cliWall
				wallRatios = append(wallRatios, wall.Seconds()/cliWall.Seconds())
				cpuRatios = append(cpuRatios, used.Seconds()/cliUsed.Seconds())
			}
			b.ReportMetric(ours.Seconds()/float64(b.N), "engine-s/op")
			b.ReportMetric(theirs.Seconds()/float64(b.N), "cli-s/op")
			b.ReportMetric(median(wallRatios), "engine/cli")
			b.ReportMetric(median(cpuRatios), "engine/cli-cpu")
			b.ReportMetric(dur.Seconds(), "audio-s")
		})
	}
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// cpuTime is the CPU time this process and its waited-for children have used.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}

// BenchmarkFindSpeech compares the two ways of finding speech on the benchmark audio:
// whisper.cpp's Silero VAD and the silence rule, next to the model on the whole audio
// (tiny.en's encoder and decoder), all on the same decoded samples.
func BenchmarkFindSpeech(b *testing.B) {
	e, _ := realEngine(b, VADSilero)
	wav, dur := benchAudio(b)
	samples, err := e.media.DecodePCM(context.Background(), wav, dur, 0)
	if err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B, spans []span) {
		n := 0
		for _, s := range spans {
			n += s.end - s.start
		}
		b.ReportMetric(float64(n)/media.PCMRate, "speech-s")
		b.ReportMetric(dur.Seconds()/(b.Elapsed().Seconds()/float64(b.N)), "x-realtime")
	}
	b.Run("silero", func(b *testing.B) {
		var spans []span
		for b.Loop() {
			if spans, err = e.model.speech(context.Background(), samples, e.vadModel); err != nil {
				b.Fatal(err)
			}
		}
		report(b, spans)
	})
	b.Run("silence", func(b *testing.B) {
		var spans []span
		for b.Loop() {
			spans = defaultSilence.speechSpans(samples)
		}
		report(b, spans)
	})
	for _, words := range []bool{false, true} {
		b.Run(fmt.Sprintf("model-whole-audio/words=%v", words), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := e.model.transcribe(context.Background(), samples, options{threads: e.threads, words: words}, func(int) {}); err != nil {
					b.Fatal(err)
				}
			}
			report(b, []span{{0, len(samples)}})
		})
	}
}
