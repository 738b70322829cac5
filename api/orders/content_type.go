package orders

import (
	"path/filepath"
	"strings"

	"parla/media"
	"parla/providers"
	"parla/providers/transcript"
)

// ContentType is the MIME type of a result file, judged by its extension.
func ContentType(name string) string {
	ext := strings.TrimPrefix(filepath.Ext(name), ".")
	for _, f := range providers.SpeechFormats {
		if info, ok := media.Format(f); ok && info.Ext == ext {
			return info.ContentType
		}
	}
	for _, f := range providers.TranscriptFormats {
		if e, contentType, ok := transcript.Info(f); ok && e == "."+ext {
			return contentType
		}
	}
	return "application/octet-stream"
}
