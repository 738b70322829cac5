package openai

// Preparing a file for the speech-to-text endpoint: sent as it is when the API takes it,
// re-encoded otherwise.

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"parla/media"
)

// upload is a file ready to send, or to cut into chunks.
type upload struct {
	path     string
	name     string // the filename the API sees; its extension names the format
	size     int64
	duration time.Duration // 0 when unknown
}

// fits reports whether a file goes in one request.
func (t *Transcriber) fits(size int64, d time.Duration) bool {
	return size <= t.maxBytes && d <= t.maxChunk
}

// prepare returns the file at path as it is when the API takes it in one request, or
// else re-encoded into dir.
func (t *Transcriber) prepare(ctx context.Context, path string, hint time.Duration, dir string) (upload, error) {
	src, err := t.describe(ctx, path, hint)
	if err != nil {
		return upload{}, err
	}
	if ext, ok := acceptedAs(path, src.info); ok && t.fits(src.size, src.duration) {
		return upload{path: path, name: "audio." + ext, size: src.size, duration: src.duration}, nil
	}
	out := filepath.Join(dir, "audio.mp3")
	if err := t.media.FFmpeg(ctx, media.ReencodeArgs(path, out, media.SpeechBitrate, media.EngineLimit(hint)), nil, nil); err != nil {
		return upload{}, fmt.Errorf("re-encoding %s of audio: %w", src.duration, err)
	}
	enc, err := t.describe(ctx, out, src.duration)
	if err != nil {
		return upload{}, fmt.Errorf("re-encoded audio: %w", err)
	}
	// The input's own duration, when known: the MP3 adds encoder padding (~70 ms) that
	// would push a file of exactly MaxChunk into one more chunk.
	d := cmp.Or(src.duration, enc.duration)
	return upload{path: out, name: "audio.mp3", size: enc.size, duration: d}, nil
}

// described is what prepare knows of a file.
type described struct {
	info     media.ProbeInfo
	size     int64
	duration time.Duration
}

// describe probes the file at path; hint stands in for a duration ffprobe cannot tell.
func (t *Transcriber) describe(ctx context.Context, path string, hint time.Duration) (described, error) {
	st, err := os.Stat(path)
	if err != nil {
		return described{}, err
	}
	info, err := t.media.Probe(ctx, path)
	if err != nil {
		return described{}, err
	}
	d := info.Duration
	if d == 0 {
		d = hint
	}
	return described{info: info, size: st.Size(), duration: d}, nil
}

// acceptedContainers maps each file extension the API takes to the ffprobe format names
// that may stand behind it, and for WebM and Ogg the audio codecs they may carry (ffprobe
// names Matroska and WebM alike, and a Matroska file with AAC is no WebM). The extension
// tells the API how to decode; the container proves that the bytes are what the name says.
var acceptedContainers = []struct {
	ext     string
	formats []string
	codecs  []string // empty: any
}{
	{"mp3", []string{"mp3"}, nil},
	{"mpga", []string{"mp3"}, nil},
	{"mpeg", []string{"mp3", "mpeg"}, nil},
	{"m4a", []string{"mov,mp4,m4a,3gp,3g2,mj2"}, nil},
	{"mp4", []string{"mov,mp4,m4a,3gp,3g2,mj2"}, nil},
	{"wav", []string{"wav"}, nil},
	{"webm", []string{"matroska,webm"}, []string{"opus", "vorbis"}},
	{"ogg", []string{"ogg"}, []string{"opus", "vorbis", "flac"}},
	{"flac", []string{"flac"}, nil},
}

// acceptedAs returns the extension under which the API takes the file at path as it is,
// and whether it does. A file whose extension is accepted must hold the matching
// container; a file without extension (an upload stored under an opaque id) is named
// after its container.
func acceptedAs(path string, info media.ProbeInfo) (string, bool) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, a := range acceptedContainers {
		if (ext == a.ext || ext == "") && slices.Contains(a.formats, info.Container) &&
			(a.codecs == nil || slices.Contains(a.codecs, info.Codec)) {
			return a.ext, true
		}
	}
	return "", false
}
