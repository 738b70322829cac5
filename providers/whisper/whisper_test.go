//go:build whisper

package whisper

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
)

// realEngine returns an engine on the test model (or WHISPER_MODEL), skipping when there is
// none.
func realEngine(t testing.TB) (*Engine, *media.Runner) {
	t.Helper()
	path := testModel()
	if path == "" {
		t.Skip("no whisper model: set WHISPER_MODEL or provide ../shared/testdata/whisper/for-tests-ggml-tiny.en.bin")
	}
	runner := media.New(media.Config{})
	e := New(Config{Model: path, Threads: min(runtime.NumCPU(), 4), Media: runner})
	t.Cleanup(func() { e.Close() })
	if err := e.Available(); err != nil {
		t.Fatalf("Available() = %v", err)
	}
	return e, runner
}

func TestWhisperTranscribes(t *testing.T) {
	e, runner := realEngine(t)
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
	for i, s := range got.Segments {
		if s.Start < 0 || s.End < s.Start || s.End > got.Duration {
			t.Errorf("segment %d: %v–%v outside the audio", i, s.Start, s.End)
		}
	}
	if n := len(progress.got); n == 0 || progress.got[n-1] != 100 {
		t.Errorf("progress %v does not end at 100", progress.got)
	}
	// whisper.cpp's test model has placeholder weights and says nothing useful; a real
	// model (WHISPER_MODEL) must hear the words.
	if os.Getenv("WHISPER_MODEL") != "" && !strings.Contains(strings.ToLower(got.Text), "world") {
		t.Errorf("Text %q does not contain \"world\"", got.Text)
	}
	t.Logf("%d segments, text %q", len(got.Segments), got.Text)
}

// BenchmarkVersusWhisperCLI runs our whole job (decode + model) and whisper.cpp's own
// whisper-cli on the same 16 kHz WAV, model and thread count, and reports both times. It
// skips where whisper-cli is not on PATH.
func BenchmarkVersusWhisperCLI(b *testing.B) {
	cli, err := exec.LookPath("whisper-cli")
	if err != nil {
		b.Skip("whisper-cli is not on PATH")
	}
	e, runner := realEngine(b)
	speechPath, dur := speech(b, runner)
	wav := filepath.Join(b.TempDir(), "speech16k.wav")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", speechPath,
		"-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le", wav).CombinedOutput(); err != nil {
		b.Fatalf("ffmpeg: %v: %s", err, out)
	}
	threads := strconv.Itoa(e.threads)
	var cliTime time.Duration
	for b.Loop() {
		if _, err := e.Transcribe(context.Background(), providers.TranscribeRequest{Path: wav, Duration: dur}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		start := time.Now()
		if out, err := exec.Command(cli, "-m", testModel(), "-t", threads, "-nt", "-np", "-f", wav).CombinedOutput(); err != nil {
			b.Fatalf("whisper-cli: %v: %s", err, out)
		}
		cliTime += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(cliTime.Nanoseconds())/float64(b.N), "cli-ns/op")
}
