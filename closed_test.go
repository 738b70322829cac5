package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"parla/api/orders"
	"parla/providers"
	"parla/providers/whisper"
)

// The first run here: whisper built, no model fetched. The block names both closed services
// once, says why, gives the one command, and says text-to-speech is served.
func TestClosedBlockNamesTheFix(t *testing.T) {
	cfg := Config{TTSEngine: "espeak", STTEngine: "whisper", WhisperModel: "models/ggml-base.bin"}
	noModel := fmt.Errorf("%w: whisper: model models/ggml-base.bin: %w", providers.ErrUnavailable, fs.ErrNotExist)
	closed := closedEngines(cfg, func(svc orders.Service) error {
		if svc == orders.TTS {
			return nil
		}
		return noModel
	})
	if len(closed) != 1 || len(closed[0].Services) != 2 {
		t.Fatalf("closedEngines = %+v, want one engine closing sst and vtt", closed)
	}
	block := closedBlock(closed)
	for _, want := range []string{"CLOSED  audio-to-text (/sst), video-to-text (/vtt)", "whisper engine: ",
		"open    models/download.sh base ", "OPEN    text-to-speech (/tts)", "/readyz and /admin"} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if strings.Count(block, "CLOSED") != 1 {
		t.Errorf("one engine, one entry:\n%s", block)
	}
	if got := reasonsByService(closed)[orders.VTT]; !strings.Contains(got, "; to open: models/download.sh base") {
		t.Errorf("admin reason = %q", got)
	}
	if closedBlock(nil) != "" {
		t.Error("all open: no block")
	}
}

func TestFixFor(t *testing.T) {
	notBuilt := fmt.Errorf("%w: whisper: %w", providers.ErrUnavailable, whisper.ErrNotBuilt)
	tests := []struct {
		cfg    Config
		engine string
		err    error
		want   string
	}{
		{Config{WhisperModel: "models/ggml-base.bin"}, "whisper", notBuilt, "make run"},
		{Config{WhisperModel: "models/ggml-small.en.bin"}, "whisper", fs.ErrNotExist, "models/download.sh small.en "},
		{Config{WhisperModel: "/data/my-model.bin"}, "whisper", fs.ErrNotExist, "models/download.sh list"},
		{Config{}, "whisper", errors.New("no model configured"), "WHISPER_MODEL="},
		{Config{}, "openai", errors.New("openai: engine unavailable: OPENAI_API_KEY not set"), "OPENAI_API_KEY="},
		{Config{}, "espeak", errors.New("espeak-ng not found"), "bash .ci/install"},
		{Config{WhisperModel: "models/ggml-base.bin"}, "whisper", errors.New("not a ggml whisper model"), ""},
	}
	for _, tt := range tests {
		got := fixFor(tt.cfg, tt.engine, tt.err)
		if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("fixFor(%s, %v) = %q, want %q…", tt.engine, tt.err, got, tt.want)
		}
	}
}
