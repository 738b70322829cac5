package orders

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"parla/providers"
)

// TestBlankTextCases runs testdata/blank_text_cases.json, which the UI's copy of the rule
// (webui/src/lib/pricing.js, blankText) runs too: the page shows no price exactly for the
// texts that ValidateTTS and QuoteSpeech refuse as empty_text.
func TestBlankTextCases(t *testing.T) {
	b, err := os.ReadFile("testdata/blank_text_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		About string `json:"about"`
		Cases []struct {
			Text  string `json:"text"`
			Blank bool   `json:"blank"`
		} `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil || len(file.Cases) == 0 {
		t.Fatalf("blank_text_cases.json: %v (%d cases)", err, len(file.Cases))
	}
	limits := TTSLimits{Voices: providers.Voices, Formats: providers.SpeechFormats, MinSpeed: 0.25, MaxSpeed: 4, MaxChars: 1000}
	for _, c := range file.Cases {
		t.Run(c.Text, func(t *testing.T) {
			_, err := limits.ValidateTTS(TTSParams{Voice: "alloy", Format: "mp3", Speed: 1, Text: c.Text})
			if refused := code(err) == "empty_text"; refused != c.Blank {
				t.Errorf("ValidateTTS(%+q): %v, want empty_text %v", c.Text, err, c.Blank)
			}
		})
	}
}
