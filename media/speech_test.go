package media

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"parla/providers/testkit"
)

func TestParseSilenceLine(t *testing.T) {
	for _, c := range []struct {
		line string
		kind string
		at   time.Duration
	}{
		{"[silencedetect @ 0x55f1e5c717c0] silence_start: 5.85025", "silence_start", 5850250 * time.Microsecond},
		{"[silencedetect @ 0x55f1e5c717c0] silence_end: 26.151 | silence_duration: 20.3008", "silence_end", 26151 * time.Millisecond},
		{"[silencedetect @ 0x1] silence_start: 0", "silence_start", 0},
		{"[silencedetect @ 0x1] silence_start: -0.01", "", 0},           // negative: not a time
		{"[silencedetect @ 0x1] silence_start: nan", "", 0},             // not a number
		{"[silencedetect @ 0x1] silence_start: 1e12", "", 0},            // beyond any file
		{"[silencedetect @ 0x1] silence_duration: 3", "", 0},            // not a start or end
		{"    title   : [silencedetect @ 0x1] silence_start: 1", "", 0}, // a tag quoting a report
		{"[aresample @ 0x1] silence_start: 1", "", 0},
		{"[silencedetect @ 0x1 silence_start: 1", "", 0},
		{"", "", 0},
	} {
		kind, at, ok := parseSilenceLine([]byte(c.line))
		if kind != c.kind || at != c.at || ok != (c.kind != "") {
			t.Errorf("parseSilenceLine(%q) = %q, %v, %v; want %q, %v", c.line, kind, at, ok, c.kind, c.at)
		}
	}
}

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

// A log as ffmpeg 5.1 writes it for speech, a pause, and silence to the end of the file
// (which it closes itself at the end), cut into writes at awkward places.
func TestSilenceLogAcrossWrites(t *testing.T) {
	log := "Input #0, mp3, from 'file:/tmp/x.mp3':\n  Metadata:\n    title           : [silencedetect @ 0x1] silence_end: 99\n" +
		"Stream mapping:\n  Stream #0:0 -> #0:0 (mp3 (mp3float) -> pcm_s16le (native))\n" +
		"[silencedetect @ 0x55f1e5c717c0] silence_start: 2.5\n" +
		"[silencedetect @ 0x55f1e5c717c0] silence_end: 3.5 | silence_duration: 1\n" +
		"[silencedetect @ 0x55f1e5c717c0] silence_start: 5.85025\r" +
		"size=N/A time=00:00:26.15 bitrate=N/A speed=1.63e+03x    \n" +
		"[silencedetect @ 0x55f1e5c717c0] silence_end: 26.151 | silence_duration: 20.3008\n"
	want := speechOf(26151*time.Millisecond, []Span{{2500 * time.Millisecond, 3500 * time.Millisecond}, {5850250 * time.Microsecond, 26151 * time.Millisecond}})
	for _, step := range []int{1, 7, 64, len(log)} {
		var l silenceLog
		for i := 0; i < len(log); i += step {
			l.Write([]byte(log[i:min(i+step, len(log))]))
		}
		got := l.measurement(26151 * time.Millisecond)
		if got.Speech != want.Speech || !slices.Equal(got.Silences, want.Silences) {
			t.Errorf("writes of %d: %+v; want %+v", step, got, want)
		}
	}
	// An older ffmpeg that leaves the last silence open: it lasts to the end.
	open := parseSilences([]byte("[silencedetect @ 0x1] silence_start: 4\n[silencedetect @ 0x1] silence_start: 5"), 10*time.Second)
	if open.Speech != 4*time.Second {
		t.Errorf("open silence: %+v", open)
	}
	// An end whose start was not seen: silence from the beginning.
	if m := parseSilences([]byte("[silencedetect @ 0x1] silence_end: 3 | silence_duration: 3\n"), 10*time.Second); m.Speech != 7*time.Second {
		t.Errorf("end without start: %+v", m)
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
	alone, err := r.Measure(ctx, speech)
	if err != nil {
		t.Fatal(err)
	}
	// espeak-ng pauses shorter than SilenceMinimum between words and sentences, and trails
	// off after the last word for less than that: all of it is speech.
	if alone.Speech != alone.Length || alone.Length < 3*time.Second {
		t.Fatalf("espeak-ng speech: %+v, want all of it speech", alone)
	}
	yes, err := r.Measure(ctx, testkit.Speech(t, dir, "yes.wav", "Yes."))
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
		m, err := r.CheckSpeech(ctx, c.path)
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

// FuzzParseSilences: whatever ffmpeg's log says (a file's tags end up in it), the measure
// never panics, speech lies in [0, length], the silences are ordered, disjoint and within
// the file, and speech is the length minus them.
func FuzzParseSilences(f *testing.F) {
	f.Add([]byte("[silencedetect @ 0x1] silence_start: 5.85025\n[silencedetect @ 0x1] silence_end: 26.151 | silence_duration: 20.3\n"), int64(26e9))
	f.Add([]byte("[silencedetect @ 0x1] silence_end: 3\n[silencedetect @ 0x1] silence_start: 1e9\n"), int64(10e9))
	f.Fuzz(func(t *testing.T, log []byte, length int64) {
		m := parseSilences(log, time.Duration(length))
		if m.Speech < 0 || m.Speech > m.Length || m.Length < 0 {
			t.Fatalf("speech %v of %v", m.Speech, m.Length)
		}
		silent := time.Duration(0)
		for i, s := range m.Silences {
			if s.Start < 0 || s.End > m.Length || s.End <= s.Start || (i > 0 && s.Start <= m.Silences[i-1].End) {
				t.Fatalf("silences %v in %v", m.Silences, m.Length)
			}
			silent += s.End - s.Start
		}
		if m.Speech != m.Length-silent {
			t.Fatalf("speech %v, length %v, silent %v", m.Speech, m.Length, silent)
		}
	})
}
