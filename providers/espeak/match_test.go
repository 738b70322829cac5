package espeak

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
)

// TestSpeakMatchesBarePipeline: a text spoken in even chunks, encoded in parallel and
// joined, lasts as long and sounds as loud as the same text through the bare pipeline
// (one espeak-ng piped into one ffmpeg encode with the same settings), in every format.
func TestSpeakMatchesBarePipeline(t *testing.T) {
	const size = 1000
	s := setup(t, Config{ChunkChars: size})
	const para = "Parla turns text into speech for anyone who needs it. The visitor pays for what " +
		"they order and receives a link by e-mail. Each sentence here is ordinary prose, with " +
		"commas, numbers like 42 and 2026, and questions? Yes, and answers. "
	text := strings.Repeat(para, 20)[:4000]
	seams := len(planned(t, text, size)) - 1
	if seams < 3 {
		t.Fatalf("%d seams", seams)
	}
	for _, format := range providers.SpeechFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			f, _ := media.Format(format)
			ours := filepath.Join(t.TempDir(), "ours."+f.Ext)
			data, _ := speak(t, s, providers.SpeechRequest{Voice: "alloy", Text: text, Format: format, Speed: 1})
			if err := os.WriteFile(ours, data, 0o600); err != nil {
				t.Fatal(err)
			}
			bare := barePipeline(t, text, format)
			lengthOurs, lengthBare := decodedLength(t, s, ours), decodedLength(t, s, bare)
			// espeak-ng's own length depends on how much text it reads at once: these
			// 4,000 characters in four pieces last 1.07 s (0.38 %) less than in one, 50,000
			// in four pieces of 12,500 0.95 s (0.03 %) less, and a paragraph read 8 times in
			// one text 0.64 s more than 8 readings of it. Each seam may also add the
			// encoder's delay and padding (media.EncodeParts: up to 95 ms, for aac). So
			// 0.5 % and 100 ms a seam: a chunk lost or read twice moves it by a minute, a
			// lost sentence by seconds.
			slack := lengthBare/200 + time.Duration(seams)*100*time.Millisecond
			if d := lengthOurs - lengthBare; d < -slack || d > slack {
				t.Errorf("lasts %v, the bare pipeline's %v (%d seams: at most %v apart)", lengthOurs, lengthBare, seams, slack)
			}
			// Integrated loudness gates silence out (EBU R128), so the few pauses the seams
			// add barely move it; 0.5 LU is the tolerance of loudness normalisation
			// (EBU R128's ±0.5 LU for a programme's target), and half of the 1 dB a listener
			// can just tell apart.
			loudOurs, loudBare := integratedLoudness(t, ours), integratedLoudness(t, bare)
			if d := loudOurs - loudBare; d < -0.5 || d > 0.5 {
				t.Errorf("integrated loudness %.2f LUFS, the bare pipeline's %.2f LUFS", loudOurs, loudBare)
			}
			t.Logf("%s: %v against %v, %.2f against %.2f LUFS", format, lengthOurs, lengthBare, loudOurs, loudBare)
		})
	}
}

// decodedLength is how long the audio of the file at path lasts, by its decoded samples.
func decodedLength(t *testing.T, s *Speaker, path string) time.Duration {
	t.Helper()
	m, err := s.media.Measure(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m.Length
}

// integratedLoudness is the integrated loudness (EBU R128, in LUFS) that ffmpeg's ebur128
// filter reads in the file at path.
func integratedLoudness(t *testing.T, path string) float64 {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-i", "file:"+path,
		"-af", "ebur128", "-f", "null", "-").CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg ebur128: %v: %.500s", err, out)
	}
	// The summary at the end holds the integrated loudness as "I: -23.4 LUFS".
	m := regexp.MustCompile(`I:\s+(-?[0-9.]+) LUFS`).FindAllSubmatch(out, -1)
	if len(m) == 0 {
		t.Fatalf("no integrated loudness in ffmpeg's output: %.500s", out)
	}
	lufs, err := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return lufs
}
