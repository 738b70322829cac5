package testkit

// Generated files that bend what they say about their length (issue 36, item 3): segments
// whose codec parameters change, container clocks squeezed or stretched, chained Ogg,
// headers that count less than the file holds, containers joined byte for byte. The
// measures' tests hold each against a plain decode of the whole file (HeardPCM).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// LyingMediaCase is one generated file: its name says how it was made.
type LyingMediaCase struct {
	Name string
	Path string
}

// seg is one tone encoded alone: the rate, the channels and the length.
type seg struct {
	rate, channels int
	length         time.Duration
}

// codec is an encoder and the muxer its segments are written with.
type codec struct {
	name  string
	enc   []string
	muxer string
}

var (
	aacTS   = codec{"aac-ts", []string{"-c:a", "aac", "-b:a", "32k"}, "mpegts"}
	aacADTS = codec{"aac-adts", []string{"-c:a", "aac", "-b:a", "32k"}, "adts"}
	mp3Raw  = codec{"mp3", []string{"-c:a", "libmp3lame", "-b:a", "32k", "-write_xing", "0"}, "mp3"}
	mp3TS   = codec{"mp3-ts", []string{"-c:a", "libmp3lame", "-b:a", "32k"}, "mpegts"}
	mp2TS   = codec{"mp2-ts", []string{"-c:a", "mp2", "-b:a", "64k"}, "mpegts"}
	mp2Raw  = codec{"mp2", []string{"-c:a", "mp2", "-b:a", "64k"}, "mp2"}
	opusOgg = codec{"opus-ogg", []string{"-c:a", "libopus", "-b:a", "24k"}, "ogg"}
	vorbis  = codec{"vorbis-ogg", []string{"-c:a", "libvorbis", "-q:a", "0"}, "ogg"}
)

// LyingMedia writes the generated cases into dir: more than forty files, each a few
// seconds of tone (so every sample is sound), made with ffmpeg and byte edits.
func LyingMedia(t testing.TB, dir string) []LyingMediaCase {
	t.Helper()
	g := &lyingGen{t: t, dir: dir, ffmpeg: Binary(t, "ffmpeg")}
	g.switching()
	g.clocks()
	g.underCounting()
	g.concatenated()
	return g.cases
}

type lyingGen struct {
	t      testing.TB
	dir    string
	ffmpeg string
	cases  []LyingMediaCase
	n      int
}

func (g *lyingGen) path(ext string) string {
	g.n++
	return filepath.Join(g.dir, fmt.Sprintf("gen%03d.%s", g.n, ext))
}

func (g *lyingGen) add(name, path string) {
	g.cases = append(g.cases, LyingMediaCase{name, path})
}

// tone encodes one segment alone, its timestamps from 0, and returns its bytes.
func (g *lyingGen) tone(c codec, s seg, freq int) []byte {
	g.t.Helper()
	out := g.path("seg")
	args := []string{"-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
		"-i", fmt.Sprintf("sine=frequency=%d:sample_rate=%d:duration=%s", freq, s.rate, secs(s.length)),
		"-af", "volume=0.5", "-ac", strconv.Itoa(s.channels)}
	args = append(args, c.enc...)
	Run(g.t, g.ffmpeg, append(args, "-f", c.muxer, "file:"+out)...)
	data, err := os.ReadFile(out)
	if err != nil {
		g.t.Fatal(err)
	}
	os.Remove(out)
	return data
}

// joined writes the segments of c, each encoded alone, one after the other.
func (g *lyingGen) joined(c codec, segs []seg, ext string) string {
	var all []byte
	for i, s := range segs {
		all = append(all, g.tone(c, s, 300+100*i)...)
	}
	return g.write(all, ext)
}

func (g *lyingGen) write(data []byte, ext string) string {
	p := g.path(ext)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		g.t.Fatal(err)
	}
	return p
}

// switching: segments whose sample rate and channels change at every seam, in the
// containers and codecs that allow it (AAC, MP3, MP2, Opus, Vorbis).
func (g *lyingGen) switching() {
	patterns := []struct {
		name string
		segs []seg
	}{
		{"16k-mono/22k-stereo", []seg{{16000, 1, 1500 * time.Millisecond}, {22050, 2, 1500 * time.Millisecond}, {16000, 1, time.Second}, {22050, 2, 2 * time.Second}}},
		{"48k-stereo/24k-mono/32k", []seg{{48000, 2, 2 * time.Second}, {24000, 1, 700 * time.Millisecond}, {32000, 2, 2500 * time.Millisecond}}},
		{"short-long", []seg{{44100, 1, 300 * time.Millisecond}, {16000, 2, 4 * time.Second}, {44100, 1, 300 * time.Millisecond}}},
	}
	for _, c := range []codec{aacTS, aacADTS, mp3Raw, mp3TS, mp2TS, mp2Raw} {
		for _, p := range patterns {
			g.add("switching "+c.name+" "+p.name, g.joined(c, p.segs, "bin"))
		}
	}
	// Chained Ogg: each stream its own header and its own granule clock from 0.
	g.add("chained ogg opus mono/stereo", g.joined(opusOgg, []seg{{48000, 1, 2 * time.Second}, {48000, 2, 3 * time.Second}, {16000, 1, time.Second}}, "ogg"))
	g.add("chained ogg vorbis 22k/44k", g.joined(vorbis, []seg{{22050, 1, 2 * time.Second}, {44100, 2, 2500 * time.Millisecond}}, "ogg"))
	g.add("chained ogg opus then vorbis", g.write(append(g.tone(opusOgg, seg{48000, 1, 2 * time.Second}, 400), g.tone(vorbis, seg{22050, 1, 3 * time.Second}, 500)...), "ogg"))
}

// clocks: a file remuxed with its timestamps squeezed or stretched (ffmpeg's -itsscale),
// in TS, MP4, Matroska and Ogg; and the shape, AAC segments switching rates in
// ADTS, remuxed to a TS whose clock runs 48 times fast.
func (g *lyingGen) clocks() {
	src := g.path("wav")
	Run(g.t, g.ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
		"-i", "sine=frequency=500:sample_rate=22050:duration=8", "-af", "volume=0.5", "file:"+src)
	containers := []struct {
		name, ext string
		enc       []string
	}{
		{"ts", "ts", []string{"-c:a", "aac", "-b:a", "32k", "-f", "mpegts"}},
		{"mp4", "mp4", []string{"-c:a", "aac", "-b:a", "32k", "-f", "mp4"}},
		{"mkv", "mkv", []string{"-c:a", "libopus", "-b:a", "24k", "-f", "matroska"}},
		{"ogg", "ogg", []string{"-c:a", "libopus", "-b:a", "24k", "-f", "ogg"}},
	}
	for _, c := range containers {
		plain := g.path(c.ext)
		Run(g.t, g.ffmpeg, append([]string{"-nostdin", "-loglevel", "error", "-y", "-i", "file:" + src}, append(c.enc, "file:"+plain)...)...)
		for _, scale := range []string{"0.0208333", "0.25", "4", "48"} {
			out := g.path(c.ext)
			Run(g.t, g.ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-itsscale", scale, "-i", "file:"+plain,
				"-c", "copy", "-f", c.enc[len(c.enc)-1], "file:"+out)
			g.add(fmt.Sprintf("clock %s x%s", c.name, scale), out)
		}
	}
	adts := g.joined(aacADTS, []seg{{16000, 1, 4 * time.Second}, {22050, 2, 4 * time.Second}, {16000, 1, 4 * time.Second}, {22050, 2, 4 * time.Second}}, "aac")
	for _, scale := range []string{"0.0208333", "0.5"} {
		out := g.path("ts")
		Run(g.t, g.ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-itsscale", scale, "-i", "file:"+adts,
			"-c", "copy", "-f", "mpegts", "file:"+out)
		g.add("clock switching adts in ts x"+scale, out)
	}
}

// underCounting: headers that count less (or more) than the file holds: an MP3's Xing
// frame count, a FLAC's STREAMINFO total, a WAV's RIFF and data sizes.
func (g *lyingGen) underCounting() {
	mp3 := g.encode("sine=frequency=440:sample_rate=24000:duration=9", "mp3", "-c:a", "libmp3lame", "-b:a", "32k", "-write_xing", "1")
	flac := g.encode("sine=frequency=440:sample_rate=16000:duration=9", "flac", "-c:a", "flac")
	wav := g.encode("sine=frequency=440:sample_rate=16000:duration=9", "wav", "-c:a", "pcm_s16le")
	for _, f := range []struct {
		name   string
		factor float64
	}{{"a tenth", 0.1}, {"half", 0.5}, {"nothing", 0}, {"four times", 4}} {
		g.add("xing counts "+f.name, g.write(xingFrames(g.t, mp3, f.factor), "mp3"))
		g.add("streaminfo counts "+f.name, g.write(flacTotal(g.t, flac, f.factor), "flac"))
		g.add("wav sizes say "+f.name, g.write(wavSizes(g.t, wav, f.factor), "wav"))
	}
}

// concatenated: whole files joined byte for byte, the second's header inside the first's
// data.
func (g *lyingGen) concatenated() {
	for _, f := range []struct{ ext, codec string }{{"mp4", "aac"}, {"matroska", "libopus"}, {"wav", "pcm_s16le"}, {"flac", "flac"}, {"mp3", "libmp3lame"}} {
		a := g.encode("sine=frequency=400:sample_rate=16000:duration=3", f.ext, "-c:a", f.codec)
		b := g.encode("sine=frequency=600:sample_rate=16000:duration=5", f.ext, "-c:a", f.codec)
		g.add("concatenated "+f.ext, g.write(append(a, b...), "bin"))
	}
	g.add("concatenated ts aac then mp2", g.write(append(g.tone(aacTS, seg{16000, 1, 3 * time.Second}, 400), g.tone(mp2TS, seg{32000, 2, 4 * time.Second}, 500)...), "ts"))
	g.add("concatenated mp3 then adts", g.write(append(g.tone(mp3Raw, seg{24000, 1, 3 * time.Second}, 400), g.tone(aacADTS, seg{16000, 1, 4 * time.Second}, 500)...), "bin"))
}

// encode makes one file of the lavfi source src with the given output options.
func (g *lyingGen) encode(src, muxer string, opts ...string) []byte {
	out := g.path("enc")
	args := append([]string{"-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", src, "-af", "volume=0.5"}, opts...)
	Run(g.t, g.ffmpeg, append(args, "-f", muxer, "file:"+out)...)
	data, err := os.ReadFile(out)
	if err != nil {
		g.t.Fatal(err)
	}
	os.Remove(out)
	return data
}

// xingFrames rewrites the frame count of an MP3's Xing or Info tag to factor of itself.
func xingFrames(t testing.TB, mp3 []byte, factor float64) []byte {
	t.Helper()
	out := bytes.Clone(mp3)
	i := bytes.Index(out, []byte("Xing"))
	if i < 0 {
		i = bytes.Index(out, []byte("Info"))
	}
	if i < 0 || len(out) < i+12 || binary.BigEndian.Uint32(out[i+4:])&1 == 0 {
		t.Fatal("the MP3 has no Xing tag with a frame count")
	}
	frames := binary.BigEndian.Uint32(out[i+8:])
	binary.BigEndian.PutUint32(out[i+8:], uint32(float64(frames)*factor))
	return out
}

// flacTotal rewrites the total sample count of a FLAC's STREAMINFO (36 bits from the
// fourth bit of its 14th byte) to factor of itself; 0 is "unknown" in FLAC.
func flacTotal(t testing.TB, flac []byte, factor float64) []byte {
	t.Helper()
	out := bytes.Clone(flac)
	if len(out) < 42 || string(out[:4]) != "fLaC" || out[4]&0x7f != 0 {
		t.Fatal("not a FLAC starting with STREAMINFO")
	}
	word := binary.BigEndian.Uint64(out[8+10:])
	total := word & (1<<36 - 1)
	word = word&^(1<<36-1) | uint64(float64(total)*factor)&(1<<36-1)
	binary.BigEndian.PutUint64(out[8+10:], word)
	return out
}

// wavSizes rewrites a WAV's data size (and RIFF size with it) to factor of itself.
func wavSizes(t testing.TB, wav []byte, factor float64) []byte {
	t.Helper()
	out := bytes.Clone(wav)
	i := bytes.Index(out, []byte("data"))
	if string(out[:4]) != "RIFF" || i < 0 {
		t.Fatal("not a WAV with a data chunk")
	}
	size := uint32(float64(binary.LittleEndian.Uint32(out[i+4:])) * factor)
	binary.LittleEndian.PutUint32(out[i+4:], size)
	binary.LittleEndian.PutUint32(out[4:], uint32(i+8-8)+size)
	return out
}

// HeardPCM is how long the whole audio of path lasts when decoded plainly: ffmpeg's first
// audio stream to 16 kHz mono s16le, every sample of it, with none of the product's
// arguments. ok is false when ffmpeg cannot decode it at all.
func HeardPCM(t testing.TB, path string) (d time.Duration, ok bool) {
	t.Helper()
	cmd := exec.Command(Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-i", "file:"+path,
		"-map", "0:a:0", "-ac", "1", "-ar", "16000", "-f", "s16le", "pipe:1")
	var out bytes.Buffer
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if err != nil && out.Len() == 0 {
		return 0, false
	}
	return time.Duration(out.Len()/2) * time.Second / 16000, true
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
