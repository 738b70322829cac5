package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"parla/api/health"
	"parla/api/orders"
	"parla/providers/whisper"
)

// modelFile is a whisper model file as models/download.sh names it: ggml-<name>.bin.
var modelFile = regexp.MustCompile(`^ggml-([a-z0-9.\-]+)\.bin$`)

// fixFor is the one command (or setting) that opens an engine closed by err, or "" when the
// reason alone is all that can be said. The first run's usual gaps are whisper built without
// libwhisper and a model that could not be fetched, so those are named precisely.
func fixFor(cfg Config, engine string, err error) string {
	switch {
	case errors.Is(err, whisper.ErrNotBuilt):
		return "make run (it builds libwhisper once; needs the whisper.cpp source: ../shared/vendor, WHISPER_SRC or internet)"
	case engine == "whisper" && cfg.WhisperModel == "":
		return "WHISPER_MODEL=models/ggml-base.bin (after models/download.sh base)"
	case engine == "whisper" && errors.Is(err, fs.ErrNotExist):
		if m := modelFile.FindStringSubmatch(filepath.Base(cfg.WhisperModel)); m != nil {
			return fmt.Sprintf("models/download.sh %s (needs internet; or copy %s into models/ from a machine that has it)", m[1], m[0])
		}
		return "models/download.sh list, then models/download.sh <name> and WHISPER_MODEL=models/ggml-<name>.bin"
	case engine == "openai" && strings.Contains(err.Error(), "OPENAI_API_KEY"):
		return "OPENAI_API_KEY=<your key>"
	case engine == "openai" && strings.Contains(err.Error(), "server "):
		return "start that server, or point OPENAI_TTS_BASE_URL (speech) or OPENAI_STT_BASE_URL (transcription) at one that runs"
	case engine == "espeak":
		return "bash .ci/install (it installs espeak-ng, kakasi and ffmpeg)"
	}
	return ""
}

// closedEngines groups the services that available reports closed by their engine
// (health.ClosedEngines), each with what opens it in this configuration (fixFor).
func closedEngines(cfg Config, available func(orders.Service) error) []health.ClosedEngine {
	return health.ClosedEngines(cfg.Engines(), available, func(engine string, err error) string {
		return fixFor(cfg, engine, err)
	})
}

// closed lists this node's closed engines, as the order book's desk sees them now.
func (a *App) closed() []health.ClosedEngine {
	return closedEngines(a.cfg, a.book.Desk.Available)
}

// reportClosed tells the operator at start what is closed: the block on a console (text
// logs), one warning per engine in JSON logs, where a block would break the log's lines.
func (a *App) reportClosed(console io.Writer) {
	closed := a.closed()
	if a.cfg.LogFormat != "json" {
		fmt.Fprint(console, health.ClosedBlock(closed))
		return
	}
	for _, c := range closed {
		a.log.Warn("services closed", "services", c.Services, "engine", c.Engine, "reason", c.Err, "fix", c.Fix)
	}
}

// engineCheck is /readyz's check of one service's engine: why it is closed and what opens it.
func (a *App) engineCheck(svc orders.Service) error {
	err := a.book.Desk.Available(svc)
	if err == nil {
		return nil
	}
	return health.WithFix(err, fixFor(a.cfg, a.cfg.Engines()[svc], err))
}
