package media

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// packetMeasureArgs is how the length was measured before it came from decoded samples:
// stream-copy every packet into the null muxer and read the time reached. It is kept here
// as the benchmarks' baseline; it follows container timestamps, which can lie.
func packetMeasureArgs(path string) []string {
	return []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-protocol_whitelist", "file",
		"-i", fileURL(path), "-map", "0:a:0", "-c", "copy", "-f", "null", "-progress", "pipe:1", "-nostats", "-"}
}

// filterMeasureArgs is the measure before issue 22: samples counted and silences found by
// ffmpeg's filters on the file's own clock (asetpts restarts when a stream changes its
// parameters mid-stream). It is the "before" of BenchmarkMeasure25MB.
func filterMeasureArgs(path string) []string {
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "info"}
	args = append(args, localInput(path)...)
	return append(args, "-map", "0:a:0", "-af", "asetpts=N/SR/TB,silencedetect=noise=-35dB:duration=0.5",
		"-f", "null", "-progress", "pipe:1", "-nostats", "-")
}

// parseProgressTime returns the last out_time_us that ffmpeg's -progress output reports;
// 0 when there is none.
func parseProgressTime(out []byte) time.Duration {
	var last time.Duration
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "out_time_us=")
		if !ok {
			continue
		}
		if us, err := strconv.ParseInt(v, 10, 64); err == nil && us > 0 && us <= math.MaxInt64/int64(time.Microsecond) {
			last = time.Duration(us) * time.Microsecond
		}
	}
	return last
}

// sampleMeasureArgs is the sample count without the speech measure (MeasureArgs before
// silencedetect joined it): the baseline that shows what the speech measure costs.
func sampleMeasureArgs(path string) []string {
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error"}
	args = append(args, localInput(path)...)
	return append(args, "-map", "0:a:0", "-af", "asetpts=N/SR/TB", "-f", "null", "-progress", "pipe:1", "-nostats", "-")
}

// benchFile makes a file of about 25 MB (the upload limit) of speech-like audio: tone plus
// noise, encoded with the given ffmpeg output options.
func benchFile(b *testing.B, r *Runner, name string, length time.Duration, enc ...string) string {
	b.Helper()
	path := b.TempDir() + "/" + name
	secs := strconv.Itoa(int(length.Seconds()))
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=" + secs,
		"-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.1:sample_rate=44100:duration=" + secs,
		// Silence for the first 10 s of every minute: volume is an expression of time.
		"-filter_complex", "[0][1]amix=inputs=2,aformat=channel_layouts=stereo,volume=eval=frame:volume='if(lt(mod(t,60),10),0,1)'"}
	args = append(append(args, enc...), "file:"+path)
	if err := r.FFmpeg(context.Background(), args, nil, nil); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkMeasure25MB measures the length of 25 MB uploads: by counting decoded samples
// with the speech measure in the same pass (Measure, what prices and checks uploads now),
// and, as baselines in the same run, by counting samples alone and by the packet measure.
// mp3 at 128 kb/s is 26 minutes; opus at 8 kb/s is about 7 hours. The files are tone and
// noise with 10 s of silence every minute, so silencedetect has silences to report.
func BenchmarkMeasure25MB(b *testing.B) {
	r := New(Config{})
	if err := r.Check(); err != nil {
		b.Skip(err)
	}
	files := []struct {
		name   string
		length time.Duration
		enc    []string
	}{
		{"mp3-128k-26min", 26 * time.Minute, []string{"-c:a", "libmp3lame", "-b:a", "128k", "-f", "mp3"}},
		{"opus-8k-7h", 7 * time.Hour, []string{"-ac", "1", "-c:a", "libopus", "-b:a", "8k", "-f", "ogg"}},
	}
	for _, f := range files {
		path := benchFile(b, r, f.name, f.length, f.enc...)
		st, _ := os.Stat(path)
		b.Run(f.name+"/speech", func(b *testing.B) {
			for b.Loop() {
				m, err := r.Measure(context.Background(), path, 0)
				if err != nil || m.Length < f.length-time.Second || m.Length > f.length+time.Second {
					b.Fatalf("measured %+v, %v; want %v", m.Length, err, f.length)
				}
				// One minute in six is silent (10 s a minute), within the 0.5 s edges of each.
				if want := f.length * 5 / 6; (m.Speech - want).Abs() > f.length/100 {
					b.Fatalf("speech %v of %v; want about %v", m.Speech, m.Length, want)
				}
			}
			b.ReportMetric(float64(st.Size())/1e6, "MB")
		})
		b.Run(f.name+"/samples", func(b *testing.B) {
			for b.Loop() {
				var out bytes.Buffer
				if err := r.FFmpeg(context.Background(), sampleMeasureArgs(path), nil, &out); err != nil {
					b.Fatal(err)
				}
				if d := parseProgressTime(out.Bytes()); d < f.length-time.Second || d > f.length+time.Second {
					b.Fatalf("measured %v; want %v", d, f.length)
				}
			}
		})
		// The two decoding passes alternated, each timed by the wall clock and by the CPU its
		// ffmpeg used (user + system of the finished child), which other jobs on a busy
		// machine disturb far less than the wall clock.
		b.Run(f.name+"/speech-vs-samples", func(b *testing.B) {
			alternate(b, [2]string{"speech", "samples"},
				func() error { _, err := r.Measure(context.Background(), path, 0); return err },
				func() error { return r.FFmpeg(context.Background(), sampleMeasureArgs(path), nil, io.Discard) })
		})
		// The measure before issue 22 (filters on the file's own clock) and now (the
		// engines' samples, silences found in Go: in this process, so in the wall clock
		// but not in the ffmpeg CPU), alternated and timed alike.
		b.Run(f.name+"/before-vs-after", func(b *testing.B) {
			alternate(b, [2]string{"before", "after"},
				func() error { return r.FFmpeg(context.Background(), filterMeasureArgs(path), nil, io.Discard) },
				func() error { _, err := r.Measure(context.Background(), path, 0); return err })
		})
		b.Run(f.name+"/packets", func(b *testing.B) {
			for b.Loop() {
				var out bytes.Buffer
				if err := r.FFmpeg(context.Background(), packetMeasureArgs(path), nil, &out); err != nil {
					b.Fatal(err)
				}
				if d := parseProgressTime(out.Bytes()); d < f.length-time.Second {
					b.Fatalf("packets say %v, want %v", d, f.length)
				}
			}
		})
	}
}

// alternate runs two measures in turn b.N times and reports each one's mean wall clock
// (<name>-s) and ffmpeg CPU (<name>-cpu-s).
func alternate(b *testing.B, names [2]string, measures ...func() error) {
	var wall, cpu [2]time.Duration
	for b.Loop() {
		for i, measure := range measures[:2] {
			c0, t0 := childCPU(), time.Now()
			if err := measure(); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(t0)
			cpu[i] += childCPU() - c0
		}
	}
	n := float64(b.N)
	for i, name := range names {
		b.ReportMetric(wall[i].Seconds()/n, name+"-s")
		b.ReportMetric(cpu[i].Seconds()/n, name+"-cpu-s")
	}
}

// childCPU is the user and system time of this process's finished children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
