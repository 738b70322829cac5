package whisper

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/testkit"
)

// speechAfter makes the espeak-ng sentence preceded by lead and followed by tail of digital
// silence, as a 16 kHz mono WAV, and returns its path, its duration and how long the
// sentence itself is.
func speechAfter(t testing.TB, lead, tail time.Duration) (path string, total, spoken time.Duration) {
	t.Helper()
	r := media.New(media.Config{})
	clip, spoken := speech(t, r)
	path = filepath.Join(t.TempDir(), fmt.Sprintf("speech-after-%v.wav", lead))
	filter := fmt.Sprintf("adelay=%d:all=1,apad=pad_dur=%.3f", lead.Milliseconds(), tail.Seconds())
	if out, err := exec.Command(testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-i", clip,
		"-af", filter, "-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", path).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	info, err := r.Probe(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return path, info.Duration, spoken
}

func TestSpeechSpans(t *testing.T) {
	rule := silenceRule{noise: 0.01, minSilence: 4, pad: 1}
	loud, quiet := float32(0.5), float32(0.001)
	build := func(pattern string) []float32 {
		out := make([]float32, len(pattern))
		for i, c := range pattern {
			switch c {
			case 'x':
				out[i] = loud
			case '-':
				out[i] = -loud // negative peaks are loud too
			default:
				out[i] = quiet
			}
		}
		return out
	}
	tests := []struct {
		name    string
		pattern string
		want    []span
	}{
		{"all silence", "..........", nil},
		{"nothing", "", nil},
		{"all speech", "xxxxx", []span{{0, 5}}},
		{"speech after silence", "......xx..", []span{{5, 9}}},
		{"short pause stays inside", "xx...xx", []span{{0, 7}}},
		{"long pause splits", "xx....xx", []span{{0, 3}, {5, 8}}},
		{"negative samples", "..-..........x", []span{{1, 4}, {12, 14}}},
		{"padded apart", "x....x", []span{{0, 2}, {4, 6}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rule.speechSpans(build(tt.pattern))
			if !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("speechSpans(%q) = %v, want %v", tt.pattern, got, tt.want)
			}
		})
	}
}

func TestPadSpans(t *testing.T) {
	got := padSpans([]span{{0, 2}, {5, 6}, {20, 30}, {31, 40}}, 2, 35)
	want := []span{{0, 8}, {18, 35}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("padSpans = %v, want %v", got, want)
	}
}

func TestSpliceAndClock(t *testing.T) {
	sec := media.PCMRate
	samples := make([]float32, 20*sec)
	for i := range samples {
		samples[i] = float32(i)
	}
	spans := []span{{2 * sec, 4 * sec}, {10 * sec, 13 * sec}}
	out, c := splice(samples, spans)
	if len(out) != 5*sec+spliceGap {
		t.Fatalf("spliced %d samples, want %d", len(out), 5*sec+spliceGap)
	}
	if out[0] != float32(2*sec) || out[2*sec-1] != float32(4*sec-1) || out[2*sec] != 0 ||
		out[2*sec+spliceGap] != float32(10*sec) || out[len(out)-1] != float32(13*sec-1) {
		t.Errorf("splice put the wrong samples in place")
	}
	ms := time.Millisecond
	gapEnd := samplesToTime(2*sec + spliceGap)
	tests := []struct {
		at   time.Duration
		end  bool
		want time.Duration
	}{
		{0, false, 2 * time.Second},
		{1500 * ms, false, 3500 * ms},
		{2 * time.Second, true, 4 * time.Second},
		{2*time.Second + 50*ms, true, 4 * time.Second},   // in the gap, ending: the speech before
		{2*time.Second + 50*ms, false, 10 * time.Second}, // in the gap, starting: the speech after
		{gapEnd + time.Second, false, 11 * time.Second},
		{30 * time.Second, true, 13 * time.Second}, // past the end (whisper's 30 s window)
		{30 * time.Second, false, 13 * time.Second},
	}
	for _, tt := range tests {
		if got := c.original(tt.at, tt.end); got != tt.want {
			t.Errorf("original(%v, end=%v) = %v, want %v", tt.at, tt.end, got, tt.want)
		}
	}
	segs := []providers.Segment{{Start: 0, End: gapEnd + time.Second, Text: " a b",
		Words: []providers.Word{{Start: 0, End: 500 * ms, Text: " a"}, {Start: gapEnd, End: gapEnd + time.Second, Text: " b"}}}}
	c.remap(segs)
	want := []providers.Segment{{Start: 2 * time.Second, End: 11 * time.Second, Text: " a b",
		Words: []providers.Word{{Start: 2 * time.Second, End: 2500 * ms, Text: " a"}, {Start: 10 * time.Second, End: 11 * time.Second, Text: " b"}}}}
	if !reflect.DeepEqual(segs, want) {
		t.Errorf("remap = %+v, want %+v", segs, want)
	}

	whole, c := splice(samples, []span{{0, len(samples)}})
	if &whole[0] != &samples[0] || c.original(3*time.Second, false) != 3*time.Second {
		t.Errorf("one span over everything is not passed through as it is")
	}
}

// The silence rule on real audio: espeak-ng speech 10 s into the file is found there.
func TestSilenceRuleOnSpeech(t *testing.T) {
	path, total, spoken := speechAfter(t, 10*time.Second, 3*time.Second)
	samples, err := media.New(media.Config{}).DecodePCM(context.Background(), path, total, 0)
	if err != nil {
		t.Fatal(err)
	}
	spans := defaultSilence.speechSpans(samples)
	if len(spans) == 0 {
		t.Fatal("no speech found")
	}
	start, end := samplesToTime(spans[0].start), samplesToTime(spans[len(spans)-1].end)
	if math.Abs((start-10*time.Second).Seconds()) > 0.5 || math.Abs((end-10*time.Second-spoken).Seconds()) > 0.5 {
		t.Errorf("speech %v–%v, want about 10s–%v", start, end, 10*time.Second+spoken)
	}
}
