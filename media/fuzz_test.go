package media

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"
)

// maxProbeSeconds is the longest duration parseSeconds believes.
const maxProbeSeconds = 1e9

// FuzzParseProbe: whatever ffprobe (or a file steering it) prints, ParseProbe never
// panics; it fails on what is not JSON, with ErrNoAudio exactly when no stream is audio,
// and otherwise describes the first audio stream; its duration is the format's when that
// is a number of seconds in (0, 1e9], else the first audio stream's, else 0 — never
// negative.
func FuzzParseProbe(f *testing.F) {
	f.Add([]byte(`{"format":{"format_name":"mp3","duration":"1.500000","bit_rate":"128000"},"streams":[{"codec_type":"audio","codec_name":"mp3","sample_rate":"24000","channels":1}]}`))
	f.Add([]byte(`{"format":{"format_name":"ogg","duration":"N/A"},"streams":[{"codec_type":"audio","codec_name":"opus","sample_rate":"48000","channels":2,"duration":"2.000000"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := ParseProbe(data)
		// The same document read with the field names ffprobe writes (encoding/json
		// matches keys without regard to case, as ParseProbe's own struct does).
		var doc struct {
			Format struct {
				FormatName string `json:"format_name"`
				Duration   string `json:"duration"`
			} `json:"format"`
			Streams []struct {
				CodecType string `json:"codec_type"`
				CodecName string `json:"codec_name"`
				Duration  string `json:"duration"`
			} `json:"streams"`
		}
		var whole probeJSON // with every field ParseProbe reads, to know whether it must fail
		if jerr := json.Unmarshal(data, &whole); jerr != nil {
			if err == nil || errors.Is(err, ErrNoAudio) {
				t.Fatalf("ParseProbe(%q) = %+v, %v; json refuses it: %v", data, info, err, jerr)
			}
			return
		}
		if err != nil && !errors.Is(err, ErrNoAudio) {
			t.Fatalf("ParseProbe(%q): %v", data, err)
		}
		if jerr := json.Unmarshal(data, &doc); jerr != nil {
			t.Fatalf("ParseProbe(%q): json reads it whole but not in part: %v", data, jerr)
		}
		first := -1
		video := false
		for i, s := range doc.Streams {
			if s.CodecType == "audio" && first < 0 {
				first = i
			}
			video = video || s.CodecType == "video"
		}
		if (first < 0) != errors.Is(err, ErrNoAudio) || info.HasVideo != video || info.Container != doc.Format.FormatName {
			t.Fatalf("ParseProbe(%q) = %+v, %v; audio stream %d, video %t", data, info, err, first, video)
		}
		want := probeSeconds(doc.Format.Duration)
		if first >= 0 {
			if info.Codec != doc.Streams[first].CodecName {
				t.Fatalf("ParseProbe(%q): codec %q, want the first audio stream's %q", data, info.Codec, doc.Streams[first].CodecName)
			}
			if want == 0 {
				want = probeSeconds(doc.Streams[first].Duration)
			}
		}
		if info.Duration != want || info.Duration < 0 || info.Duration > maxProbeSeconds*time.Second {
			t.Fatalf("ParseProbe(%q): duration %v, want %v", data, info.Duration, want)
		}
	})
}

// probeSeconds reads ffprobe's seconds the way ParseProbe promises: a number in
// (0, maxProbeSeconds] or nothing (0), NaN included.
func probeSeconds(s string) time.Duration {
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return 0
	case math.IsNaN(f) || f <= 0 || f > maxProbeSeconds:
		return 0
	}
	return time.Duration(f * float64(time.Second))
}
