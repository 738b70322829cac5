package media

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"parla/providers/testkit"
)

func TestSpeechOf(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name     string
		length   time.Duration
		silences []Span
		speech   time.Duration
		merged   []Span
	}{
		{"no silence", 10 * s, nil, 10 * s, nil},
		{"all silence", 10 * s, []Span{{0, 10 * s}}, 0, []Span{{0, 10 * s}}},
		{"two gaps", 10 * s, []Span{{1 * s, 2 * s}, {5 * s, 8 * s}}, 6 * s, []Span{{1 * s, 2 * s}, {5 * s, 8 * s}}},
		{"out of order, overlapping", 10 * s, []Span{{5 * s, 8 * s}, {1 * s, 6 * s}}, 3 * s, []Span{{1 * s, 8 * s}}},
		{"past the end", 10 * s, []Span{{9 * s, 12 * s}}, 9 * s, []Span{{9 * s, 10 * s}}},
		{"before the start", 10 * s, []Span{{-2 * s, 1 * s}}, 9 * s, []Span{{0, 1 * s}}},
		{"backwards span", 10 * s, []Span{{4 * s, 3 * s}}, 10 * s, nil},
		{"contained", 10 * s, []Span{{1 * s, 9 * s}, {2 * s, 3 * s}}, 2 * s, []Span{{1 * s, 9 * s}}},
		{"no length", 0, []Span{{0, 1 * s}}, 0, nil},
	} {
		m := speechOf(c.length, c.silences)
		if m.Speech != c.speech || !slices.Equal(m.Silences, c.merged) || m.Length != max(c.length, 0) {
			t.Errorf("%s: %+v; want speech %v, silences %v", c.name, m, c.speech, c.merged)
		}
	}
}

// f32Bytes is samples as ffmpeg's f32le output writes them.
func f32Bytes(samples []float32) []byte {
	out := make([]byte, 0, 4*len(samples))
	for _, x := range samples {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

// stretch is n samples at level.
func stretch(level float32, d time.Duration) []float32 {
	return slices.Repeat([]float32{level}, int(d/(time.Second/PCMRate)))
}

// Sound, a pause shorter than SilenceMinimum, sound, a silence, sound, and silence to the
// end, cut into writes at awkward places (samples split between writes).
func TestSilenceScanAcrossWrites(t *testing.T) {
	ms := time.Millisecond
	var samples []float32
	for _, part := range [][]float32{
		stretch(0.5, 1000*ms), stretch(0, 300*ms), stretch(-0.2, 700*ms),
		stretch(0.01, 1500*ms), stretch(0.1, 500*ms), stretch(-0.001, 2000*ms),
	} {
		samples = append(samples, part...)
	}
	raw := f32Bytes(samples)
	want := speechOf(6000*ms, []Span{{2000 * ms, 3500 * ms}, {4000 * ms, 6000 * ms}})
	for _, step := range []int{1, 7, 4096, len(raw)} {
		s := &silenceScan{}
		for i := 0; i < len(raw); i += step {
			if n, err := s.Write(raw[i:min(i+step, len(raw))]); err != nil || n != min(step, len(raw)-i) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		got := s.measurement()
		if got.Length != want.Length || got.Speech != want.Speech || !slices.Equal(got.Silences, want.Silences) {
			t.Errorf("writes of %d: %+v; want %+v", step, got, want)
		}
	}
}

// A scan with a limit counts no more than it, and then refuses to read on.
func TestSilenceScanLimit(t *testing.T) {
	s := &silenceScan{limit: PCMRate}
	raw := f32Bytes(stretch(0.5, 3*time.Second))
	if _, err := s.Write(raw); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(raw[:4]); !errors.Is(err, errPastLimit) {
		t.Fatalf("a write past the limit: %v", err)
	}
	if m := s.measurement(); m.Length != time.Second || m.Speech != time.Second {
		t.Fatalf("%+v", m)
	}
}

// TestMeasureSpeech measures real audio made here: espeak-ng's speech, digital silence,
// quiet and loud noise, and speech with long silences around it, in wav and mp3.
func TestMeasureSpeech(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	ctx := context.Background()
	ffmpeg := testkit.Binary(t, "ffmpeg")
	speech := testkit.Speech(t, dir, "speech.wav", testkit.SampleSentence)
	alone, err := r.Measure(ctx, speech, 0)
	if err != nil {
		t.Fatal(err)
	}
	// espeak-ng pauses shorter than SilenceMinimum between words and sentences, and trails
	// off after the last word for less than that: all of it is speech.
	if alone.Speech != alone.Length || alone.Length < 3*time.Second {
		t.Fatalf("espeak-ng speech: %+v, want all of it speech", alone)
	}
	yes, err := r.Measure(ctx, testkit.Speech(t, dir, "yes.wav", "Yes."), 0)
	if err != nil {
		t.Fatal(err)
	}
	lavfi := func(name, src string) string {
		p := filepath.Join(dir, name)
		testkit.Run(t, ffmpeg, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", src, "-ac", "1", "file:"+p)
		return p
	}
	// padded wraps the speech in silence: before seconds of it first, after seconds last.
	padded := func(name string, before, after int) string {
		p := filepath.Join(dir, name)
		testkit.Run(t, ffmpeg, "-nostdin", "-loglevel", "error", "-i", "file:"+speech,
			"-af", "adelay="+strconv.Itoa(before*1000)+",apad=pad_dur="+strconv.Itoa(after), "file:"+p)
		return p
	}
	for _, c := range []struct {
		name       string
		path       string
		length     time.Duration
		speech     time.Duration // within SilenceMinimum: espeak-ng's quiet ends join the silence next to them
		hasSpeech  bool
		silenceMin int // at least this many silences
	}{
		{"silence", lavfi("silence.wav", "anullsrc=r=22050:cl=mono:d=10"), 10 * time.Second, 0, false, 1},
		// One word is speech enough to be taken (SpeechFloor is shorter than a word).
		{"one word", testkit.Speech(t, dir, "yes.mp3", "Yes."), yes.Length, yes.Length, true, 0},
		{"hiss at -40 dB", lavfi("hiss.wav", "anoisesrc=color=white:amplitude=0.01:r=22050:d=10"), 10 * time.Second, 0, false, 1},
		{"noise at -30 dB", lavfi("noise.wav", "anoisesrc=color=white:amplitude=0.03:r=22050:d=10"), 10 * time.Second, 10 * time.Second, true, 0},
		{"speech then 30 s silence", padded("after.wav", 0, 30), alone.Length + 30*time.Second, alone.Speech, true, 1},
		{"20 s silence, speech, 20 s silence (mp3)", padded("around.mp3", 20, 20), alone.Length + 40*time.Second, alone.Speech, true, 2},
	} {
		m, err := r.CheckUpload(ctx, c.path, 0)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !near(m.Length, c.length, 0.02) || (m.Speech-c.speech).Abs() > SilenceMinimum ||
			m.HasSpeech() != c.hasSpeech || len(m.Silences) < c.silenceMin {
			t.Errorf("%s: length %v, speech %v (%d silences), has speech %v; want %v, %v, %v",
				c.name, m.Length, m.Speech, len(m.Silences), m.HasSpeech(), c.length, c.speech, c.hasSpeech)
		}
	}
}

// FuzzSilenceScan: whatever samples ffmpeg writes, however cut, the measure never panics,
// its length is the whole samples written, speech lies in [0, length], the silences are
// ordered, disjoint and within the file, and speech is the length minus them.
func FuzzSilenceScan(f *testing.F) {
	f.Add(f32Bytes(append(stretch(0.5, time.Second), stretch(0, time.Second)...)), uint16(7))
	f.Add([]byte{0, 0, 0x80, 0x7f, 0, 0, 0xc0, 0x7f, 1}, uint16(1)) // +Inf, NaN, a stray byte
	f.Fuzz(func(t *testing.T, raw []byte, step uint16) {
		s := &silenceScan{}
		n := max(int(step), 1)
		for i := 0; i < len(raw); i += n {
			s.Write(raw[i:min(i+n, len(raw))])
		}
		m := s.measurement()
		if m.Length != samplesTime(int64(len(raw)/4)) || m.Speech < 0 || m.Speech > m.Length {
			t.Fatalf("speech %v of %v for %d bytes", m.Speech, m.Length, len(raw))
		}
		silent := time.Duration(0)
		for i, sp := range m.Silences {
			if sp.Start < 0 || sp.End > m.Length || sp.End <= sp.Start || (i > 0 && sp.Start <= m.Silences[i-1].End) {
				t.Fatalf("silences %v in %v", m.Silences, m.Length)
			}
			silent += sp.End - sp.Start
		}
		if m.Speech != m.Length-silent {
			t.Fatalf("speech %v, length %v, silent %v", m.Speech, m.Length, silent)
		}
	})
}
