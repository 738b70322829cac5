package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
)

// The ffmpeg a deployment ships (the image's own build, docker/ffmpeg/build.sh, has only the
// components Parla uses) must do everything the argument builders ask of it. TestFFmpegBuild
// checks that with nothing but that ffmpeg, its ffprobe and the files in testdata/formats, so
// CI can run it inside the image (`go test -c`, then the binary with -test.run):
//
//	PARLA_FFMPEG=/path/to/ffmpeg go test -count=1 -run TestFFmpegBuild ./media/
//
// PARLA_FFPROBE defaults to the ffprobe next to PARLA_FFMPEG; without either, PATH's. The
// other tests of the package use the same pair (newRunner), so the whole suite can run
// against a build too; they make their inputs with PATH's ffmpeg and espeak-ng.

// updateFormats rewrites testdata/formats with PATH's ffmpeg (a full one, Debian's).
var updateFormats = flag.Bool("formats.update", false, "rewrite testdata/formats with PATH's ffmpeg")

// toolsUnderTest returns the ffmpeg and ffprobe the tests run: PARLA_FFMPEG and
// PARLA_FFPROBE, else PATH's.
func toolsUnderTest() (ffmpeg, ffprobe string) {
	ffmpeg, ffprobe = os.Getenv("PARLA_FFMPEG"), os.Getenv("PARLA_FFPROBE")
	if ffprobe == "" && ffmpeg != "" {
		ffprobe = filepath.Join(filepath.Dir(ffmpeg), "ffprobe")
	}
	return ffmpeg, ffprobe
}

// formatFixtures are the files in testdata/formats: one per demuxer of MediaFormats, each
// with an audio codec such files commonly carry, made by PATH's ffmpeg from a tone (-i
// {tone}) with these output options. AMR is written in Go (amrFile): Debian's ffmpeg has no
// AMR encoder.
var formatFixtures = map[string][]string{
	"mov.m4a":      {"-c:a", "aac", "-b:a", "32k"},
	"video.mp4":    {"-f", "lavfi", "-i", "color=c=navy:s=64x48:r=5", "-shortest", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-b:a", "32k"},
	"matroska.mkv": {"-c:a", "libvorbis"},
	"webm.webm":    {"-c:a", "libopus", "-b:a", "24k"},
	"mp3.mp3":      {"-c:a", "libmp3lame", "-b:a", "32k"},
	"aac.aac":      {"-c:a", "aac", "-b:a", "32k", "-f", "adts"},
	"ogg.ogg":      {"-c:a", "libvorbis"},
	"flac.flac":    {"-c:a", "flac"},
	"wav.wav":      {"-c:a", "pcm_s16le"},
	"avi.avi":      {"-c:a", "libmp3lame", "-b:a", "32k"},
	"flv.flv":      {"-c:a", "aac", "-b:a", "32k"},
	"mpegts.ts":    {"-c:a", "aac", "-b:a", "32k", "-f", "mpegts"},
	"mpeg.mpg":     {"-c:a", "mp2", "-b:a", "64k", "-f", "mpeg"},
	"asf.wma":      {"-c:a", "wmav2", "-b:a", "32k"},
	"aiff.aiff":    {"-c:a", "pcm_s16be"},
	"caf.caf":      {"-c:a", "alac"},
	"ac3.ac3":      {"-ar", "48000", "-c:a", "ac3", "-b:a", "64k"},
	"eac3.eac3":    {"-ar", "48000", "-c:a", "eac3", "-b:a", "64k"},
	"w64.w64":      {"-c:a", "pcm_s16le"},
}

// fixtureLength is how long each fixture lasts: enough for a measure, small enough to
// keep in the repository (140 KB together).
const fixtureLength = 600 * time.Millisecond

func TestFFmpegBuild(t *testing.T) {
	r := newRunner(t)
	dir := filepath.Join("testdata", "formats")
	if *updateFormats {
		writeFormatFixtures(t, dir)
	}
	ctx := context.Background()

	t.Run("components", func(t *testing.T) {
		for kind, names := range requiredComponents() {
			have := listComponents(t, r, kind)
			for _, name := range names {
				if !have[name] {
					t.Errorf("ffmpeg has no %s %s", kind, name)
				}
			}
		}
	})

	t.Run("orderable formats", func(t *testing.T) {
		wav := toneWAV(1.5, 22050)
		for _, format := range []string{MP3, Opus, AAC, FLAC} {
			f, _ := Format(format)
			var out bytes.Buffer
			// Tempo 1.5: atempo on the way, 1 s out.
			if err := r.Encode(ctx, WAV, bytes.NewReader(wav), EncodeOptions{Format: format, Tempo: 1.5}, &out); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if info := probeBytes(t, r, out.Bytes(), f.Ext); info.Codec != f.Codec || !near(info.Duration, time.Second, 0.1) {
				t.Errorf("%s: %+v, want 1 s of %s", format, info, f.Codec)
			}
			// A part of a long order, in the form the join takes.
			part := filepath.Join(t.TempDir(), "part")
			args, err := PartArgs(EncodeOptions{Format: format}, fileURL(part))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.FFmpeg(ctx, args, bytes.NewReader(wav), nil); err != nil {
				t.Errorf("%s part: %v", format, err)
			}
			if format == AAC {
				checkADTSRemux(t, r, part)
			}
		}
		var out bytes.Buffer
		if err := r.Encode(ctx, PCM(24000, 1), bytes.NewReader(toneWAV(1, 24000)[44:]), EncodeOptions{Format: MP3}, &out); err != nil {
			t.Errorf("raw PCM to mp3: %v", err)
		}
	})

	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(names) < len(formatFixtures)+1 {
		t.Fatalf("testdata/formats holds %d files (%v); run with -formats.update", len(names), err)
	}
	for _, path := range names {
		t.Run("visitor file "+filepath.Base(path), func(t *testing.T) {
			checkVisitorFile(t, r, path)
		})
	}

	t.Run("link through the relay", func(t *testing.T) {
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		defer srv.Close()
		url := srv.URL + "/video.mp4"
		var probe bytes.Buffer
		if err := r.FFprobe(ctx, RemoteProbeArgs(url), &probe); err != nil {
			t.Fatal(err)
		}
		bounds := RemoteBounds{Claimed: fixtureLength}
		if m, err := r.MeasureRemoteBounded(ctx, url, bounds); err != nil || !near(m.Length, fixtureLength, 0.15) {
			t.Errorf("MeasureRemoteBounded = %+v, %v", m, err)
		}
		dst := filepath.Join(t.TempDir(), "audio.mka")
		if err := r.FFmpeg(ctx, FetchAudioArgs(url, dst), nil, nil); err != nil {
			t.Fatal(err)
		}
		if info, err := r.Probe(ctx, dst); err != nil || info.Codec != "aac" {
			t.Errorf("fetched audio: %+v, %v", info, err)
		}
	})

	t.Run("hostile uploads", func(t *testing.T) {
		tmp := t.TempDir()
		secret := filepath.Join(tmp, "secret.mp3")
		var mp3 bytes.Buffer
		if err := r.Encode(ctx, WAV, bytes.NewReader(toneWAV(1, 22050)), EncodeOptions{Format: MP3}, &mp3); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(secret, mp3.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		checkRefusesHostileUploads(t, r, tmp, secret)
	})
}

// checkVisitorFile runs what an order of audio- or video-to-text does with an upload: the
// check (probe and measure), the decode for whisper, the re-encode and cut for OpenAI.
func checkVisitorFile(t *testing.T, r *Runner, path string) {
	ctx := context.Background()
	m, err := r.CheckPaid(ctx, path, fixtureLength)
	if err != nil || !near(m.Length, fixtureLength, 0.15) {
		t.Fatalf("CheckPaid = %+v, %v; want %v", m, err, fixtureLength)
	}
	if u, err := r.CheckUpload(ctx, path, 3*time.Hour); err != nil || !near(u.Length, fixtureLength, 0.15) {
		t.Errorf("CheckUpload = %+v, %v; want %v", u, err, fixtureLength)
	}
	samples, err := r.DecodePCM(ctx, path, m.Length, EngineLimit(m.Length))
	if err != nil || len(samples) < int(fixtureLength.Seconds()*0.8*PCMRate) {
		t.Errorf("DecodePCM: %d samples, %v", len(samples), err)
	}
	out := filepath.Join(t.TempDir(), "speech.mp3")
	if err := r.FFmpeg(ctx, ReencodeArgs(path, out, SpeechBitrate, EngineLimit(m.Length)), nil, nil); err != nil {
		t.Fatalf("ReencodeArgs: %v", err)
	}
	chunk := filepath.Join(t.TempDir(), "chunk.mp3")
	if err := r.FFmpeg(ctx, ChunkArgs(out, chunk, 100*time.Millisecond, 300*time.Millisecond), nil, nil); err != nil {
		t.Errorf("ChunkArgs: %v", err)
	}
}

// checkADTSRemux turns an ADTS part into the delivered M4A, as OpenAI's answers are.
func checkADTSRemux(t *testing.T, r *Runner, adts string) {
	data, err := os.ReadFile(adts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := r.Encode(context.Background(), ADTS, bytes.NewReader(data), EncodeOptions{Format: AAC}, &out); err != nil {
		t.Fatalf("ADTS to M4A: %v", err)
	}
	if info := probeBytes(t, r, out.Bytes(), "m4a"); info.Codec != "aac" || !strings.Contains(info.Container, "mp4") {
		t.Errorf("ADTS remuxed: %+v", info)
	}
}

// requiredComponents reads, from the argument lists the builders make, every demuxer,
// muxer, encoder, filter and protocol ffmpeg must have, plus those ffmpeg picks itself.
func requiredComponents() map[string][]string {
	var lists [][]string
	for _, format := range []string{MP3, Opus, AAC, FLAC} {
		for _, in := range []Input{WAV, PCM(24000, 1)} {
			args, _ := EncodeArgs(in, EncodeOptions{Format: format, Tempo: 3}, "pipe:1")
			lists = append(lists, args)
		}
		part, _ := PartArgs(EncodeOptions{Format: format}, "file:p")
		lists = append(lists, part)
	}
	remux, _ := EncodeArgs(ADTS, EncodeOptions{Format: AAC}, "file:o")
	lists = append(lists, remux, RemoteMeasureArgs("http://127.0.0.1/x"), PCMArgs("in", time.Hour),
		ReencodeArgs("in", "out", SpeechBitrate, time.Hour), ChunkArgs("in", "out", time.Second, time.Second),
		FetchAudioArgs("http://127.0.0.1/x", "out"), ProbeArgs("in"), RemoteProbeArgs("http://127.0.0.1/x"),
		LoudPCMArgs("in", 24000))
	need := map[string][]string{
		// -ar and -ac insert aresample; f32le and null encode with their default encoders.
		"filter":  {"aresample"},
		"encoder": {"pcm_f32le", "pcm_s16le"},
	}
	add := func(kind string, names ...string) {
		for _, n := range names {
			if n != "" && n != "copy" && !slices.Contains(need[kind], n) {
				need[kind] = append(need[kind], n)
			}
		}
	}
	for _, args := range lists {
		input := true // until -i; all of an ffprobe list
		for i := 0; i+1 < len(args); i++ {
			v := args[i+1]
			switch args[i] {
			case "-i":
				input = false
			case "-f":
				add(map[bool]string{true: "demuxer", false: "muxer"}[input], v)
			case "-format_whitelist":
				add("demuxer", strings.Split(v, ",")...)
			case "-protocol_whitelist":
				add("protocol", strings.Split(v, ",")...)
			case "-c:a":
				add("encoder", v)
			case "-af", "-filter:a":
				for _, f := range strings.Split(v, ",") {
					add("filter", strings.SplitN(f, "=", 2)[0])
				}
			}
		}
	}
	return need
}

// listComponents asks ffmpeg which components of a kind it has (-demuxers, -encoders, …),
// by every name each goes by ("matroska,webm").
func listComponents(t *testing.T, r *Runner, kind string) map[string]bool {
	t.Helper()
	out, err := exec.Command(r.ffmpeg, "-hide_banner", "-"+kind+"s").Output()
	if err != nil {
		t.Fatalf("ffmpeg -%ss: %v", kind, err)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if kind == "protocol" && len(fields) == 1 {
			have[fields[0]] = true
		}
		if len(fields) >= 2 {
			for _, n := range strings.Split(fields[1], ",") {
				have[n] = true
			}
		}
	}
	return have
}

// toneWAV is seconds of a 440 Hz tone at rate Hz as a mono 16-bit WAV, made in Go so that
// the ffmpeg under test needs no generator (lavfi) of its own.
func toneWAV(seconds float64, rate int) []byte {
	n := int(seconds * float64(rate))
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 2*n))
	b.WriteString("WAVEfmt ")
	// PCM, mono, rate, bytes a second, bytes a frame, bits a sample.
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		le(v)
	}
	b.WriteString("data")
	le(uint32(2 * n))
	for i := range n {
		le(int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate))))
	}
	return b.Bytes()
}

// amrFile is seconds of AMR-NB (12.2 kb/s frames of arbitrary bits: any bits decode).
func amrFile(seconds float64) []byte {
	b := []byte("#!AMR\n")
	for i := range int(seconds * 50) {
		frame := make([]byte, 32)
		frame[0] = 0x3c // frame type 7 (12.2 kb/s), quality bit set
		for j := 1; j < len(frame); j++ {
			frame[j] = byte(i*31 + j*7)
		}
		b = append(b, frame...)
	}
	return b
}

// writeFormatFixtures makes testdata/formats with PATH's ffmpeg.
func writeFormatFixtures(t *testing.T, dir string) {
	ffmpeg := testkit.Binary(t, "ffmpeg")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "tone.wav")
	if err := os.WriteFile(src, toneWAV(fixtureLength.Seconds(), 16000), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, opts := range formatFixtures {
		args := []string{"-nostdin", "-loglevel", "error", "-y"}
		if opts[0] == "-f" { // a second input (video) comes first
			args, opts = append(args, opts[:4]...), opts[4:]
		}
		args = append(append(append(args, "-i", src, "-map_metadata", "-1", "-fflags", "+bitexact"), opts...), filepath.Join(dir, name))
		testkit.Run(t, ffmpeg, args...)
	}
	if err := os.WriteFile(filepath.Join(dir, "amr.amr"), amrFile(fixtureLength.Seconds()), 0o644); err != nil {
		t.Fatal(err)
	}
}
