package health

import (
	"fmt"
	"strings"

	"parla/providers"
)

// The start's block on closed services, and the reasons /readyz and /admin give: which
// engine closes which service, why, and the one command (or setting) that opens it. main
// knows the configuration and so the fix (its fixFor); this file only groups and words it.

// serviceNames are the services as the console block names them: the site's words and the page.
var serviceNames = map[providers.Service]string{
	providers.TTS: "text-to-speech (/tts)",
	providers.STT: "audio-to-text (/sst)",
	providers.VTT: "video-to-text (/vtt)",
}

// Services is the order the block and the admin area list the services in.
var Services = []providers.Service{providers.TTS, providers.STT, providers.VTT}

// ClosedEngine is one engine that cannot take orders, the services it closes, why, and what opens it.
type ClosedEngine struct {
	Services []providers.Service
	Engine   string
	Err      error
	Fix      string
}

// ClosedEngines groups the services that available reports closed by their engine (engines
// names each service's; audio- and video-to-text share one), in the order of Services;
// fix says what opens an engine closed by an error ("" when nothing more can be said).
func ClosedEngines(engines map[providers.Service]string, available func(providers.Service) error,
	fix func(engine string, err error) string) []ClosedEngine {
	var out []ClosedEngine
	seen := map[string]int{}
	for _, svc := range Services {
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
		out = append(out, ClosedEngine{Services: []providers.Service{svc}, Engine: engine, Err: err, Fix: fix(engine, err)})
	}
	return out
}

// ClosedBlock is the console block that the start prints when services are closed: what is
// closed, why, the command that opens it, and what is served anyway. "" when all are open.
func ClosedBlock(closed []ClosedEngine) string {
	if len(closed) == 0 {
		return ""
	}
	shut := map[providers.Service]bool{}
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
	for _, svc := range Services {
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

// ReasonsByService is each closed service's reason and fix, for the admin area.
func ReasonsByService(closed []ClosedEngine) map[providers.Service]string {
	out := map[providers.Service]string{}
	for _, c := range closed {
		for _, svc := range c.Services {
			out[svc] = WithFix(c.Err, c.Fix).Error()
		}
	}
	return out
}

// WithFix is why an engine is closed and, when known, what opens it: /readyz and /admin say it.
func WithFix(err error, fix string) error {
	if fix == "" {
		return err
	}
	return fmt.Errorf("%w; to open: %s", err, fix)
}
