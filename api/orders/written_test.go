package orders

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"parla/providers"
)

// Cues the engine cleaner takes for noise are, once the visitor saved them, in every
// format of the link as written (the cleaner dropped "Thank you." and "[MUSIC]" and
// served "la la la"); the original, as delivered, is still cleaned.
func TestSavedEditServedAsWritten(t *testing.T) {
	f, o, _ := deliveredTranscript(t)
	ctx := context.Background()
	s := time.Second
	written := []string{"Thank you.", "[MUSIC]", "♪ la la la ♪", "(laughs)", "Yes, indeed.", "Yes, indeed.", "Yes, indeed.", "Yes, indeed."}
	var cues []providers.Segment
	for i, text := range written {
		cues = append(cues, seg(time.Duration(i)*s, time.Duration(i+1)*s, text))
	}
	if _, _, err := f.book.Results.SaveEdit(ctx, o, cues, 0); err != nil {
		t.Fatal(err)
	}
	for _, format := range providers.TranscriptFormats {
		body, _, _, err := f.book.Results.OtherFormat(ctx, o, format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		served := string(body)
		if strings.HasSuffix(format, "json") {
			var v struct{ Text string }
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			served = v.Text
		}
		for _, text := range []string{"Thank you.", "[MUSIC]", "♪ la la la ♪", "(laughs)"} {
			if !strings.Contains(served, text) {
				t.Errorf("%s lacks %q:\n%s", format, text, body)
			}
		}
		if n := strings.Count(served, "Yes, indeed."); n != 4 {
			t.Errorf("%s serves %d of 4 \"Yes, indeed.\":\n%s", format, n, body)
		}
	}
}
