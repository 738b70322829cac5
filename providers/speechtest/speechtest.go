// Package speechtest holds what the text-to-speech engines' tests share: run one request
// through a real engine and probe the file it wrote with ffprobe.
package speechtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"parla/media"
	"parla/providers"
)

// Speak runs req through s and returns the encoded file and what ffprobe reads from it.
func Speak(t testing.TB, s providers.Speaker, req providers.SpeechRequest) ([]byte, media.ProbeInfo) {
	t.Helper()
	var out bytes.Buffer
	if err := s.Speak(context.Background(), req, &out); err != nil {
		t.Fatalf("Speak: %v", err)
	}
	f, _ := media.Format(req.Format)
	path := filepath.Join(t.TempDir(), "speech."+f.Ext)
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := media.New(media.Config{}).Probe(context.Background(), path)
	if err != nil {
		t.Fatalf("probing result: %v", err)
	}
	return out.Bytes(), info
}
