package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

// ErrNoAudio is returned (wrapped) by Probe when a file has no audio stream.
var ErrNoAudio = errors.New("no audio stream")

// ProbeInfo is what ffprobe says about a media file.
type ProbeInfo struct {
	// Duration of the file; 0 when ffprobe cannot tell.
	Duration time.Duration
	// Codec is the codec_name of the first audio stream ("mp3", "opus", "aac", "flac", …).
	Codec string
	// Container is ffprobe's format_name ("mp3", "ogg", "aac", "flac", "mov,mp4,m4a,…").
	Container string
	// SampleRate of the first audio stream in Hz.
	SampleRate int
	// Channels of the first audio stream.
	Channels int
	// BitRate of the whole file in bits per second, 0 when unknown.
	BitRate int64
	// HasVideo reports a video stream (cover art counts).
	HasVideo bool
}

// Probe describes the local file at path. It fails with ErrNoAudio (wrapped) when the file
// has no audio stream, so callers can reject uploads that are not audio.
func (r *Runner) Probe(ctx context.Context, path string) (ProbeInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ProbeInfo{}, fmt.Errorf("probing %s: %w", path, err)
	}
	var out bytes.Buffer
	if err := r.FFprobe(ctx, ProbeArgs(abs), &out); err != nil {
		return ProbeInfo{}, fmt.Errorf("probing %s: %w", filepath.Base(path), err)
	}
	info, err := ParseProbe(out.Bytes())
	if err != nil {
		return ProbeInfo{}, fmt.Errorf("probing %s: %w", filepath.Base(path), err)
	}
	return info, nil
}

type probeJSON struct {
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
		BitRate    string `json:"bit_rate"`
	} `json:"format"`
	Streams []struct {
		CodecType  string `json:"codec_type"`
		CodecName  string `json:"codec_name"`
		SampleRate string `json:"sample_rate"`
		Channels   int    `json:"channels"`
		Duration   string `json:"duration"`
	} `json:"streams"`
}

// ParseProbe reads ffprobe's JSON output. The format's duration wins; a stream's is the
// fallback (some containers only know one of them).
func ParseProbe(data []byte) (ProbeInfo, error) {
	var p probeJSON
	if err := json.Unmarshal(data, &p); err != nil {
		return ProbeInfo{}, fmt.Errorf("reading ffprobe output: %w", err)
	}
	info := ProbeInfo{Container: p.Format.FormatName}
	info.BitRate, _ = strconv.ParseInt(p.Format.BitRate, 10, 64)
	info.Duration = parseSeconds(p.Format.Duration)
	audio := false
	for _, s := range p.Streams {
		switch s.CodecType {
		case "video":
			info.HasVideo = true
		case "audio":
			if audio {
				continue
			}
			audio = true
			info.Codec = s.CodecName
			info.SampleRate, _ = strconv.Atoi(s.SampleRate)
			info.Channels = s.Channels
			if info.Duration == 0 {
				info.Duration = parseSeconds(s.Duration)
			}
		}
	}
	if !audio {
		return info, ErrNoAudio
	}
	return info, nil
}

// parseSeconds turns ffprobe's "12.345000" into a Duration; "N/A", "" and nonsense give 0.
func parseSeconds(s string) time.Duration {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f <= 1e9) { // also NaN, which compares false both ways
		return 0
	}
	return time.Duration(f * float64(time.Second))
}
