package orders

import "parla/providers/transcript"

// render renders the link's transcript in format: the visitor's edit as they wrote it
// (transcript.RenderWritten: the engine cleaner would drop their "Thank you." or
// "[MUSIC]"), the engine's original through the cleaner, as delivered.
func (e Editable) render(format string) ([]byte, error) {
	if e.Edited != nil {
		return transcript.RenderWritten(*e.Edited, format)
	}
	return transcript.Render(e.current(), format)
}
