package health

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"parla/providers"
)

// Server is one server the engines call (an OpenAI-compatible one) and the services that
// go to it. The start asks each whether it is up (AskServers), and /readyz does too
// (ServerChecks).
type Server struct {
	Services []providers.Service
	Check    func(ctx context.Context) error
	BaseURL  string
	// Spare: text-to-speech has other engines (TTS_ENGINE is a list), which take its
	// languages over while this server is down: the node stays ready.
	Spare bool
}

// Servers lists the servers the engines call, one per base URL: text-to-speech's (each of
// a list's engines), and audio- and video-to-text's (one engine serves both). An engine
// that calls no server (espeak-ng, whisper.cpp) has none.
func Servers(speaker providers.Speaker, transcriber providers.Transcriber) []Server {
	var out []Server
	add := func(e any, spare bool, services ...providers.Service) {
		c, ok := e.(providers.ServerChecker)
		if !ok {
			return
		}
		if j := indexOfServer(out, c.BaseURL()); j >= 0 {
			out[j].Services = append(out[j].Services, services...)
			out[j].Spare = false // transcription has no other engine
			return
		}
		out = append(out, Server{Services: services, Check: c.Check, BaseURL: c.BaseURL(), Spare: spare})
	}
	speakers := []providers.Speaker{speaker}
	if r, ok := speaker.(providers.SpeakerGroup); ok {
		speakers = r.Speakers()
	}
	for _, s := range speakers {
		add(s, len(speakers) > 1, providers.TTS)
	}
	add(transcriber, false, providers.STT, providers.VTT)
	return out
}

func indexOfServer(servers []Server, base string) int {
	for i, s := range servers {
		if s.BaseURL == base {
			return i
		}
	}
	return -1
}

// BootServerTimeout bounds the start's question to each server.
const BootServerTimeout = 3 * time.Second

// AskServers asks each server at the start whether it is up: one that is down closes its
// services (the closed block says why, as for a missing engine) until a later check or
// call finds it up.
func AskServers(ctx context.Context, servers []Server, log *slog.Logger) {
	for _, s := range servers {
		cctx, cancel := context.WithTimeout(ctx, BootServerTimeout)
		if err := s.Check(cctx); err != nil {
			log.Warn("speech server down at start", "services", s.Services, "server", s.BaseURL, "err", err)
		}
		cancel()
	}
}

// ServerChecks are /readyz's checks of the servers, named by their services
// ("server.tts", "server.stt+vtt"); a server only audio- and video-to-text use is optional
// unless their engine is required (sttRequired: STT_ENGINE is set), and so is a speech
// server with spare engines behind it.
func ServerChecks(servers []Server, sttRequired bool) []Check {
	var checks []Check
	for _, s := range servers {
		names := make([]string, len(s.Services))
		optional := true
		for i, svc := range s.Services {
			names[i] = string(svc)
			optional = optional && (svc == providers.TTS && s.Spare || svc != providers.TTS && !sttRequired)
		}
		checks = append(checks, Check{Name: "server." + strings.Join(names, "+"), Optional: optional,
			Run: s.Check, Detail: s.BaseURL})
	}
	return checks
}
