package main

// Benchmarks for the audio-to-text upload targets (issue 4). Run them with
//
//	go test -run '^$' -bench 'Upload' -benchtime 1x .
//
// They start the built binary as its own process, so that its peak RSS (VmHWM in
// /proc/<pid>/status) is the server's alone and not the load generator's.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"parla/media"
	"parla/providers/testkit"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// builtBinary builds the product once per test process.
func builtBinary(tb testing.TB) string {
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "parla-bench-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "parla")
		if out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		tb.Fatal(binaryErr)
	}
	return binaryPath
}

// process is the product running as a child process.
type process struct {
	base string
	cmd  *exec.Cmd
}

// startBinary starts the built product with env on a fresh data directory and waits for
// /healthz; it reports how long that took. The process is stopped at the end of the test.
func startBinary(tb testing.TB, env ...string) (*process, time.Duration) {
	addr := testkit.FreePort(tb)
	cmd := exec.Command(builtBinary(tb))
	cmd.Env = append(append(os.Environ(), "ADDR="+addr, "DATA_DIR="+tb.TempDir(), "LOG_LEVEL=warn"), env...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	// Every 5 ms: the resolution of BenchmarkStartupToHealthz.
	healthy := testkit.WaitEvery(5*time.Millisecond, 10*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if !healthy {
		tb.Fatal("no /healthz within 10 s")
	}
	return &process{base: "http://" + addr, cmd: cmd}, time.Since(start)
}

// peakRSS is the process's high-water resident set size in bytes.
func (p *process) peakRSS(tb testing.TB) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	tb.Fatal("no VmHWM")
	return 0
}

// uploadFile posts path as the form's file; chunked sends it without a length.
func (p *process) uploadFile(path string, chunked bool) (int, []byte, error) {
	return p.uploadFileCtx(context.Background(), path, chunked)
}

// uploadFileCtx is uploadFile that gives up (closes its connection) when ctx ends: the
// visitor leaves.
func (p *process) uploadFileCtx(ctx context.Context, path string, chunked bool) (int, []byte, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		defer f.Close()
		w, _ := mw.CreateFormFile("file", filepath.Base(path))
		if _, err := io.Copy(w, f); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.CloseWithError(mw.Close())
	}()
	var body io.Reader = pr
	length := int64(-1)
	if !chunked {
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, pr); err != nil {
			return 0, nil, err
		}
		body, length = &buf, int64(buf.Len())
	}
	req, _ := http.NewRequestWithContext(ctx, "POST", p.base+"/services/sst/uploadaudio", body)
	req.ContentLength = length
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// toneWAV writes seconds of 16 kHz mono 16-bit tone: 32,000 bytes a second.
func toneWAV(tb testing.TB, dir string, seconds int) string {
	path := filepath.Join(dir, fmt.Sprintf("tone-%ds.wav", seconds))
	testkit.Run(tb, testkit.Binary(tb, "ffmpeg"), "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi",
		"-i", fmt.Sprintf("sine=frequency=300:duration=%d:sample_rate=16000", seconds), "-ac", "1", path)
	return path
}

// BenchmarkUpload25MB: target — uploading 25 MB raises the server's peak RSS by less than
// 20 MB, with a length and chunked.
func BenchmarkUpload25MB(b *testing.B) {
	requireMediaTools(b)
	file := toneWAV(b, b.TempDir(), 780) // 24.96 MB
	for _, chunked := range []bool{false, true} {
		b.Run(fmt.Sprintf("chunked=%v", chunked), func(b *testing.B) {
			p, _ := startBinary(b, "RATE_LIMIT=0", "UPLOAD_QUOTA_PER_CLIENT=0", "UPLOAD_QUOTA_TOTAL=0", "STT_ENGINE=openai", "OPENAI_API_KEY=sk-unused", "OPENAI_BASE_URL="+newModelsServer(b).URL+"/v1")
			small := toneWAV(b, b.TempDir(), 2)
			if status, body, err := p.uploadFile(small, chunked); err != nil || status != 200 {
				b.Fatalf("warm-up upload: %d %s %v", status, body, err)
			}
			before := p.peakRSS(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if status, body, err := p.uploadFile(file, chunked); err != nil || status != 200 {
					b.Fatalf("upload: %d %s %v", status, body, err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(p.peakRSS(b)-before)/(1<<20), "peak-RSS-rise-MB")
			b.ReportMetric(float64(before)/(1<<20), "peak-RSS-before-MB")
		})
	}
}

// BenchmarkUploadConcurrent: target — 200 uploads of 1 MB from 20 clients, no error.
func BenchmarkUploadConcurrent(b *testing.B) {
	requireMediaTools(b)
	file := toneWAV(b, b.TempDir(), 32) // 1.02 MB
	p, _ := startBinary(b, "RATE_LIMIT=0", "UPLOAD_QUOTA_PER_CLIENT=0", "UPLOAD_QUOTA_TOTAL=0", "STT_ENGINE=openai", "OPENAI_API_KEY=sk-unused", "OPENAI_BASE_URL="+newModelsServer(b).URL+"/v1")
	before := p.peakRSS(b)
	var failed atomic.Int64
	var firstErr atomic.Value
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		jobs := make(chan int)
		var wg sync.WaitGroup
		for c := 0; c < 20; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range jobs {
					status, body, err := p.uploadFile(file, false)
					if err != nil || status != 200 {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Sprintf("%d %s %v", status, body, err))
					}
				}
			}()
		}
		for j := 0; j < 200; j++ {
			jobs <- j
		}
		close(jobs)
		wg.Wait()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d uploads failed; first: %v", n, 200*b.N, firstErr.Load())
	}
	b.ReportMetric(float64(200*b.N)/elapsed.Seconds(), "uploads/s")
	b.ReportMetric(float64(p.peakRSS(b)-before)/(1<<20), "peak-RSS-rise-MB")
}

// BenchmarkUploadSpeechCheck25MB: target — the speech measure of a 25 MB upload takes
// under 2 s, and silencedetect in the decoding pass does not make it noticeably slower.
// The file is 26 minutes of mp3 at 128 kb/s (tone and noise, silent for the first 10 s of
// every minute), the slowest 25 MB to decode among the usual formats. ns/op is the whole
// upload (transfer, probe, the measure, keeping the file); beside it, in the same run,
// the measure alone (media.Runner.Measure: samples and speech in one pass) and, as the
// baseline, the same decoding pass counting samples without silencedetect.
func BenchmarkUploadSpeechCheck25MB(b *testing.B) {
	requireMediaTools(b)
	ffmpeg := testkit.Binary(b, "ffmpeg")
	file := filepath.Join(b.TempDir(), "talk-26min.mp3")
	testkit.Run(b, ffmpeg, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=1560",
		"-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.1:sample_rate=44100:duration=1560",
		"-filter_complex", "[0][1]amix=inputs=2,aformat=channel_layouts=stereo,volume=eval=frame:volume='if(lt(mod(t,60),10),0,1)'",
		"-c:a", "libmp3lame", "-b:a", "128k", file)
	p, _ := startBinary(b, "RATE_LIMIT=0", "UPLOAD_QUOTA_PER_CLIENT=0", "UPLOAD_QUOTA_TOTAL=0", "STT_ENGINE=openai", "OPENAI_API_KEY=sk-unused", "OPENAI_BASE_URL="+newModelsServer(b).URL+"/v1")
	var answer []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		status, body, err := p.uploadFile(file, false)
		if err != nil || status != 200 {
			b.Fatalf("upload: %d %s %v", status, body, err)
		}
		answer = body
	}
	b.StopTimer()
	if !bytes.Contains(answer, []byte(`"duration":1560,`)) || !bytes.Contains(answer, []byte(`"speechSeconds":130`)) {
		b.Fatalf("upload answer %s; want 1560 s with 1300 s of speech", answer) // 26 × (60 − 10) s
	}
	// Timed by the wall clock and by the CPU the ffmpeg child used (user + system), which
	// other jobs on a busy machine disturb far less.
	r := media.New(media.Config{})
	var wall, cpu [2]time.Duration
	const rounds = 3
	for range rounds {
		for i, measure := range []func(){
			func() {
				if _, err := r.Measure(context.Background(), file, 0); err != nil {
					b.Fatal(err)
				}
			},
			func() {
				testkit.Run(b, ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-i", file, "-map", "0:a:0",
					"-af", "asetpts=N/SR/TB", "-f", "null", "-progress", "pipe:1", "-nostats", "-")
			},
		} {
			c0, t0 := childrenCPU(), time.Now()
			measure()
			wall[i] += time.Since(t0)
			cpu[i] += childrenCPU() - c0
		}
	}
	b.ReportMetric(wall[0].Seconds()/rounds, "speech-measure-s")
	b.ReportMetric(cpu[0].Seconds()/rounds, "speech-measure-cpu-s")
	b.ReportMetric(wall[1].Seconds()/rounds, "samples-only-s")
	b.ReportMetric(cpu[1].Seconds()/rounds, "samples-only-cpu-s")
}

// childrenCPU is the user and system time of this process's finished children.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// flacBomb writes the decode bomb of issue 22 with ffmpeg: hours of a constant level at
// 8 kHz in FLAC frames of 65,535 samples (a constant subframe each, about 13 bytes), piped
// so that STREAMINFO leaves the length unknown. 24 hours take about 180 KB: enough for the
// server to decode up to STT_MAX_DURATION (3 h) before it refuses it, the costliest bomb it
// still measures.
func flacBomb(tb testing.TB, dir string, hours int) string {
	path := filepath.Join(dir, fmt.Sprintf("bomb-%dh.flac", hours))
	out, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(testkit.Binary(tb, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", fmt.Sprintf("aevalsrc=0.25:s=8000:d=%d", hours*3600), "-c:a", "flac", "-frame_size", "65535", "-f", "flac", "pipe:1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("ffmpeg: %v: %s", err, stderr.Bytes())
	}
	return path
}

// preview asks the server for a preview of a sentence of its own (previews are cached by
// text) and returns how long the answer took.
func (p *process) preview(tb testing.TB, i int) time.Duration {
	body := fmt.Sprintf(`{"text":"Preview number %d. The quick brown fox jumps over the lazy dog.","voice":"nova","speed":1,"format":"opus","language":"en","locale":"en"}`, i)
	start := time.Now()
	resp, err := http.Post(p.base+"/api/tts/preview", "application/json", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		tb.Fatalf("preview: %d", resp.StatusCode)
	}
	return time.Since(start)
}

// ffmpegChildren counts the ffmpeg processes the server runs now.
func (p *process) ffmpegChildren() int {
	n := 0
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "(ffmpeg") {
			continue
		}
		if fields := strings.Fields(s[i+1:]); len(fields) > 1 && fields[1] == strconv.Itoa(p.cmd.Process.Pid) {
			n++
		}
	}
	return n
}

// BenchmarkPreviewUnderBombs: target — a preview's latency while four decode-bomb uploads
// are measured, and just after their visitors left, is within 2× of idle (issue 22, item
// 2). Visitors' measures run in a pool of their own and stop when the visitor leaves; a
// bomb is refused within seconds. Reported in milliseconds (medians of 3 previews), with
// how long one bomb takes to be refused and how many ffmpeg processes were left a moment
// after the visitors left.
func BenchmarkPreviewUnderBombs(b *testing.B) {
	requireMediaTools(b)
	bomb := flacBomb(b, b.TempDir(), 24)
	p, _ := startBinary(b, "RATE_LIMIT=0", "STT_ENGINE=openai", "OPENAI_API_KEY=sk-unused", "OPENAI_BASE_URL="+newModelsServer(b).URL+"/v1")
	n := 0
	median := func() time.Duration {
		var d [3]time.Duration
		for i := range d {
			n++
			d[i] = p.preview(b, n)
		}
		slices.Sort(d[:])
		return d[1]
	}
	p.preview(b, 0) // warm up: the voice and the encoder are loaded once
	var idle, under, after, refused time.Duration
	left := 0
	for b.Loop() {
		idle += median()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { p.uploadFileCtx(ctx, bomb, false) })
		}
		time.Sleep(500 * time.Millisecond) // the uploads arrived and their measures run
		under += median()
		cancel() // the visitors leave
		wg.Wait()
		after += p.preview(b, -n)
		time.Sleep(200 * time.Millisecond)
		left += p.ffmpegChildren()
		start := time.Now()
		status, body, err := p.uploadFile(bomb, false)
		refused += time.Since(start)
		if err != nil || status != 422 {
			b.Fatalf("a bomb: %d %s %v; want refused", status, body, err)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(b.N) }
	b.ReportMetric(ms(idle), "idle-ms")
	b.ReportMetric(ms(under), "under-4-bombs-ms")
	b.ReportMetric(ms(after), "after-visitors-left-ms")
	b.ReportMetric(float64(under)/float64(idle), "under/idle")
	b.ReportMetric(ms(refused), "bomb-refused-ms")
	b.ReportMetric(float64(left)/float64(b.N), "ffmpeg-left")
}
