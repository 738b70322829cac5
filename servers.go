package main

import (
	"context"
	"strings"
	"time"

	"parla/api/health"
	"parla/api/orders"
	"parla/providers"
)

// engineServer is one server the engines call and the services that go to it.
type engineServer struct {
	Services []orders.Service
	Check    func(ctx context.Context) error
	BaseURL  string
	// Spare: text-to-speech has other engines (TTS_ENGINE is a list), which take its
	// languages over while this server is down: the node stays ready.
	Spare bool
}

// engineServers lists the servers the engines call, one per base URL: text-to-speech's
// (each of a list's engines), and audio- and video-to-text's (one engine serves both). An
// engine that calls no server (espeak-ng, whisper.cpp) has none.
func engineServers(speaker providers.Speaker, transcriber providers.Transcriber) []engineServer {
	var out []engineServer
	add := func(e any, spare bool, services ...orders.Service) {
		c, ok := e.(providers.ServerChecker)
		if !ok {
			return
		}
		if j := indexOfServer(out, c.BaseURL()); j >= 0 {
			out[j].Services = append(out[j].Services, services...)
			out[j].Spare = false // transcription has no other engine
			return
		}
		out = append(out, engineServer{Services: services, Check: c.Check, BaseURL: c.BaseURL(), Spare: spare})
	}
	speakers := []providers.Speaker{speaker}
	if r, ok := speaker.(providers.SpeakerGroup); ok {
		speakers = r.Speakers()
	}
	for _, s := range speakers {
		add(s, len(speakers) > 1, orders.TTS)
	}
	add(transcriber, false, orders.STT, orders.VTT)
	return out
}

func indexOfServer(servers []engineServer, base string) int {
	for i, s := range servers {
		if s.BaseURL == base {
			return i
		}
	}
	return -1
}

// bootServerTimeout bounds the boot's question to each server.
const bootServerTimeout = 3 * time.Second

// checkServers asks each server at boot whether it is up: one that is down closes its
// services (the closed block says why, as for a missing engine) until a later check or
// call finds it up.
func (a *App) checkServers(ctx context.Context) {
	for _, s := range a.servers {
		cctx, cancel := context.WithTimeout(ctx, bootServerTimeout)
		if err := s.Check(cctx); err != nil {
			a.log.Warn("speech server down at start", "services", s.Services, "server", s.BaseURL, "err", err)
		}
		cancel()
	}
}

// serverChecks are /readyz's checks of the servers, named by their services
// ("server.tts", "server.stt+vtt"); a server only audio- and video-to-text use is optional
// unless STT_ENGINE is set, as their engine is, and so is a speech server with spare
// engines behind it.
func (a *App) serverChecks() []health.Check {
	var checks []health.Check
	for _, s := range a.servers {
		names := make([]string, len(s.Services))
		optional := true
		for i, svc := range s.Services {
			names[i] = string(svc)
			optional = optional && (svc == orders.TTS && s.Spare || svc != orders.TTS && !a.cfg.STTRequired)
		}
		checks = append(checks, health.Check{Name: "server." + strings.Join(names, "+"), Optional: optional,
			Run: s.Check, Detail: s.BaseURL})
	}
	return checks
}
