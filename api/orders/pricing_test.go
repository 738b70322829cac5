package orders

import "testing"

func TestDefaultPricesAtTheBoundaries(t *testing.T) {
	p := DefaultPricing()
	tests := []struct {
		svc      Service
		quantity int64
		want     int64
	}{
		{TTS, 0, 0},
		{TTS, 1, 99},
		{TTS, 999, 99},
		{TTS, 1000, 99},
		{TTS, 1001, 198},
		{TTS, 50000, 4950},
		{TTS, 100000, 9900},
		// audio: max(99, ceil(99 × s / 100))
		{STT, 0, 0},
		{STT, 1, 99},
		{STT, 59, 99},
		{STT, 60, 99},
		{STT, 100, 99},
		{STT, 101, 100},
		{STT, 3600, 3564},
		// video: max(99, ceil(99 × s / 60))
		{VTT, 0, 0},
		{VTT, 1, 99},
		{VTT, 59, 99},
		{VTT, 60, 99},
		{VTT, 61, 101},
		{VTT, 90, 149},
		{VTT, 100, 165},
		{VTT, 101, 167},
		{VTT, 10800, 17820},
	}
	for _, tt := range tests {
		t.Run(string(tt.svc), func(t *testing.T) {
			if got := p.Quote(tt.svc, tt.quantity); got != tt.want {
				t.Errorf("Quote(%s, %d) = %d, want %d", tt.svc, tt.quantity, got, tt.want)
			}
		})
	}
}

func TestCountCharsCountsCodePoints(t *testing.T) {
	tests := map[string]int64{
		"":           0,
		"abc":        3,
		"héllo":      5,
		"日本語":        3,
		"👍🏽":         2, // two code points, as JavaScript's [...s] counts them
		"مرحبا":      5,
		"a\nb":       3,
		"\xff\xfeab": 4,
	}
	for in, want := range tests {
		if got := CountChars(in); got != want {
			t.Errorf("CountChars(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestParsePricing(t *testing.T) {
	p, err := ParsePricing(`{"rules":{"tts":{"unitAmount":150,"per":500,"rounding":"started"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Quote(TTS, 501); got != 300 {
		t.Errorf("custom TTS price for 501 chars = %d, want 300", got)
	}
	if got := p.Quote(STT, 101); got != 100 {
		t.Errorf("audio rule should keep its default, got %d", got)
	}
	for _, bad := range []string{`{`, `{"rules":{"xyz":{"unitAmount":1,"per":1,"rounding":"started"}}}`,
		`{"rules":{"tts":{"unitAmount":0,"per":1,"rounding":"started"}}}`,
		`{"rules":{"tts":{"unitAmount":1,"per":1,"rounding":"floor"}}}`} {
		if _, err := ParsePricing(bad); err == nil {
			t.Errorf("ParsePricing(%s) accepted a bad price list", bad)
		}
	}
}
