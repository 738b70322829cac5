package transcript

import (
	"fmt"

	"parla/providers"
)

// RenderWritten returns t in the named format as a person wrote it: the visitor's own
// corrections in the editor. Clean is for an engine's output (its annotations, its
// inventions over silence, its loops); a person's "Thank you.", "[MUSIC]" or four
// "Yes, indeed." in a row are what they meant. So every segment's text reaches every
// format unchanged but for the format's own escaping (vtt's entities, srt's "-->") and the
// subtitle layout, which may cut a long segment into cues and lines but never drops,
// merges or rewrites a word.
func RenderWritten(t providers.Transcript, name string) ([]byte, error) {
	f, ok := formats[normalize(name)]
	if !ok {
		return nil, fmt.Errorf("unknown transcript format %q", name)
	}
	out, err := f.render(validUTF8(t))
	if err != nil {
		return nil, fmt.Errorf("rendering %s transcript: %w", normalize(name), err)
	}
	return out, nil
}
