package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"parla/api/orders"
	"parla/providers/whisper"
)

// serviceNames are the services as the console block names them: the site's words and the page.
var serviceNames = map[orders.Service]string{
	orders.TTS: "text-to-speech (/tts)",
	orders.STT: "audio-to-text (/sst)",
	orders.VTT: "video-to-text (/vtt)",
}

// allServices is the order the block and the admin area list the services in.
var allServices = []orders.Service{orders.TTS, orders.STT, orders.VTT}

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

// closedEngine is one engine that cannot take orders, the services it closes, why, and what opens it.
type closedEngine struct {
	Services []orders.Service
	Engine   string
	Err      error
	Fix      string
}

// closedEngines groups the services that available reports closed by their engine (audio- and
// video-to-text share one), in the order of allServices.
func closedEngines(cfg Config, available func(orders.Service) error) []closedEngine {
	var out []closedEngine
	engines := cfg.Engines()
	seen := map[string]int{}
	for _, svc := range allServices {
		err := available(svc)
		if err == nil {
			continue
		}
		engine := engines[svc]
		if i, ok := seen[engine]; ok {
			out[i].Services = append(out[i].Services, svc)
			continue
		}
		seen[engine] = len(out)
		out = append(out, closedEngine{Services: []orders.Service{svc}, Engine: engine, Err: err, Fix: fixFor(cfg, engine, err)})
	}
	return out
}

// closedBlock is the console block that the start prints when services are closed: what is
// closed, why, the command that opens it, and what is served anyway. "" when all are open.
func closedBlock(closed []closedEngine) string {
	if len(closed) == 0 {
		return ""
	}
	shut := map[orders.Service]bool{}
	var b strings.Builder
	rule := strings.Repeat("-", 72)
	fmt.Fprintf(&b, "%s\nParla: some services are closed; the others are served.\n", rule)
	for _, c := range closed {
		names := make([]string, len(c.Services))
		for i, svc := range c.Services {
			names[i] = serviceNames[svc]
			shut[svc] = true
		}
		fmt.Fprintf(&b, "\n  CLOSED  %s\n  why     %s engine: %v\n", strings.Join(names, ", "), c.Engine, c.Err)
		if c.Fix != "" {
			fmt.Fprintf(&b, "  open    %s\n", c.Fix)
		}
	}
	var open []string
	for _, svc := range allServices {
		if !shut[svc] {
			open = append(open, serviceNames[svc])
		}
	}
	if len(open) > 0 {
		fmt.Fprintf(&b, "\n  OPEN    %s\n", strings.Join(open, ", "))
	}
	fmt.Fprintf(&b, "\nVisitors see the closed pages as not offered here; /readyz and /admin say why.\n%s\n", rule)
	return b.String()
}

// closed lists this node's closed engines, as the order book's desk sees them now.
func (a *App) closed() []closedEngine {
	return closedEngines(a.cfg, a.book.Desk.Available)
}

// reportClosed tells the operator at start what is closed: the block on a console (text
// logs), one warning per engine in JSON logs, where a block would break the log's lines.
func (a *App) reportClosed(console io.Writer) {
	closed := a.closed()
	if a.cfg.LogFormat != "json" {
		fmt.Fprint(console, closedBlock(closed))
		return
	}
	for _, c := range closed {
		a.log.Warn("services closed", "services", c.Services, "engine", c.Engine, "reason", c.Err, "fix", c.Fix)
	}
}

// reasonsByService is each closed service's reason and fix, for the admin area.
func reasonsByService(closed []closedEngine) map[orders.Service]string {
	out := map[orders.Service]string{}
	for _, c := range closed {
		for _, svc := range c.Services {
			out[svc] = withFix(c.Err, c.Fix).Error()
		}
	}
	return out
}

// withFix is why an engine is closed and, when known, what opens it: /readyz and /admin say it.
func withFix(err error, fix string) error {
	if fix == "" {
		return err
	}
	return fmt.Errorf("%w; to open: %s", err, fix)
}

// engineCheck is /readyz's check of one service's engine: why it is closed and what opens it.
func (a *App) engineCheck(svc orders.Service) error {
	err := a.book.Desk.Available(svc)
	if err == nil {
		return nil
	}
	return withFix(err, fixFor(a.cfg, a.cfg.Engines()[svc], err))
}
