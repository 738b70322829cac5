package links

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parla/media"
	"parla/providers/testkit"
)

// previewLength is the contract's preview: the first 30 s.
const previewLength = 30 * time.Second

func TestPreviewBytes(t *testing.T) {
	const most = 64 << 20
	tests := []struct {
		name string
		info LinkInfo
		want int64
	}{
		// 10 MB over 3 min: 55.6 kB/s, twice 30 s of it, 1 MiB, 1 KiB a second of the file.
		{"a 3-minute video", LinkInfo{Size: 10_000_000, Duration: 3 * time.Minute}, 3_333_333 + 1<<20 + 180<<10},
		{"a 10-hour podcast: its index", LinkInfo{Size: 288_000_000, Duration: 10 * time.Hour}, 480_000 + 1<<20 + 36_000<<10},
		{"shorter than the preview", LinkInfo{Size: 100_000, Duration: 10 * time.Second}, 600_000 + 1<<20 + 10<<10},
		{"a dense file, capped", LinkInfo{Size: 4 << 30, Duration: time.Minute}, most},
		{"size unknown", LinkInfo{Duration: time.Minute}, most},
		{"length unknown", LinkInfo{Size: 1 << 20}, most},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := previewBytes(tt.info, previewLength, most); got != tt.want {
				t.Errorf("previewBytes = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestStartBytes(t *testing.T) {
	tests := []struct {
		bitrate int
		want    int64
	}{
		{56_000, 420_000 + 64<<10}, // twice 7 kB/s for 30 s, and the header's room
		{130_000, 975_000 + 64<<10},
		{0, 3_840_000 + 64<<10}, // unknown: 512 kbit/s
	}
	for _, tt := range tests {
		if got := startBytes(tt.bitrate, previewLength); got != tt.want {
			t.Errorf("startBytes(%d) = %d, want %d", tt.bitrate, got, tt.want)
		}
	}
}

// longSpeech makes dir/name: espeak-ng's sentence over and over for length, encoded with
// the given ffmpeg arguments (inputs after the speech's, and output options).
func longSpeech(t *testing.T, dir, name string, length time.Duration, args ...string) string {
	t.Helper()
	once := filepath.Join(dir, name+".once.wav")
	testkit.Run(t, testkit.Binary(t, "espeak-ng"), "-w", once, "Parla reads the first half minute of a long video.")
	out := filepath.Join(dir, name)
	all := append([]string{"-nostdin", "-loglevel", "error", "-y", "-stream_loop", "-1", "-i", once}, args...)
	all = append(all, "-t", fmt.Sprint(length.Seconds()), "file:"+out)
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), all...)
	return out
}

// readClip reads a preview clip back: its samples' count, after checking its format.
func readClip(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(data)
	f, err := media.ReadWAVHeader(r)
	if err != nil || f != (media.WAVFormat{SampleRate: 16000, Channels: 1, BitsPerSample: 16}) {
		t.Fatalf("clip: %+v, %v", f, err)
	}
	return r.Len() / 2
}

// checkClip wants a full preview: 30 s of samples exactly (well, at most, and within a
// second of it), with speech, measured as it was written.
func checkClip(t *testing.T, what string, m media.Measurement, dst string) {
	t.Helper()
	n := readClip(t, dst)
	if n > 30*media.PCMRate || n < 29*media.PCMRate || !m.HasSpeech() {
		t.Errorf("%s: %d samples, %+v; want 30 s of speech", what, n, m)
	}
	if m.Length != time.Duration(n)*time.Second/media.PCMRate {
		t.Errorf("%s: measured %v, the clip holds %d samples", what, m.Length, n)
	}
}

// TestLinkPreviewReadsTheStartOnly: the preview of a 3-minute faststart MP4 (video and
// sound, 15 MB) has well under half of it sent by a host that serves ranges (the relay asks
// for growing windows: 4 MB of them), and gives 30 s of speech from a host without ranges
// too, and from an MP4 indexed at its end, by seeking. From a host without ranges the
// latter would be read whole to reach its index: the byte cap (previewBytes) refuses it
// instead. A Cached resolver previews as its Resolver does.
func TestLinkPreviewReadsTheStartOnly(t *testing.T) {
	dir := t.TempDir()
	video := []string{"-f", "lavfi", "-i", "testsrc2=s=320x240:r=25", "-map", "1:v", "-map", "0:a",
		"-c:v", "libx264", "-preset", "ultrafast", "-b:v", "600k", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k"}
	fast := longSpeech(t, dir, "fast.mp4", 3*time.Minute, append(video, "-movflags", "+faststart")...)
	slow := longSpeech(t, dir, "slow.mp4", 3*time.Minute, video...)
	srv := serveClips(t, dir)
	r := newLinkResolver(t, ResolverConfig{AnalyzeTimeout: 2 * time.Minute, SpeechMaxBytes: -1})
	ctx := context.Background()
	for _, c := range []struct {
		name, path, file string
		half             bool  // fewer than half the bytes sent
		err              error // the preview's error
	}{
		{"faststart, ranges", "/files/", fast, true, nil},
		{"faststart, no ranges", "/plain/", fast, false, nil},
		{"indexed at the end, ranges", "/files/", slow, true, nil},
		{"indexed at the end, no ranges", "/plain/", slow, false, ErrSourceUnreachable},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := os.Stat(c.file)
			if err != nil {
				t.Fatal(err)
			}
			info, err := r.Analyze(ctx, srv.URL+c.path+filepath.Base(c.file))
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "clip.wav")
			before := srv.served.Load()
			m, err := NewCached(r).PreviewClip(ctx, info, dst, previewLength)
			sent := srv.served.Load() - before
			t.Logf("%d of %d bytes sent for the preview (%.0f %%; the cap %d): %v", sent, st.Size(),
				100*float64(sent)/float64(st.Size()), previewBytes(info, previewLength, defaultAnalyzeMaxBytes), err)
			switch {
			case c.err != nil:
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				checkClip(t, c.name, m, dst)
			}
			if c.half && sent >= st.Size()/2 {
				t.Errorf("the preview had %d bytes sent of %d", sent, st.Size())
			}
		})
	}
}

// TestLinkPreviewFailsAsTheSourceFails: a source that hangs up before the preview's
// seconds, answers an error, never answers or trickles fails as a link fails
// (ErrSourceUnreachable), and within the preview's time (AnalyzeTimeout, 3 s here) and
// 10 s more.
func TestLinkPreviewFailsAsTheSourceFails(t *testing.T) {
	dir := t.TempDir()
	file := longSpeech(t, dir, "talk.mp3", 2*time.Minute, "-b:a", "64k")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		switch r.URL.Path {
		case "/cut.mp3": // the first 10 s, and a hang-up
			w.Write(data[:len(data)/12])
		case "/trickle.mp3": // a byte every 100 ms, for ever
			for i := 0; r.Context().Err() == nil; i++ {
				w.Write(data[i : i+1])
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond) // under test: a source that trickles
			}
		case "/gone.mp3":
			w.Header().Del("Content-Length")
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	silent, _ := silentHost(t)
	const timeout = 3 * time.Second
	r := newLinkResolver(t, ResolverConfig{AnalyzeTimeout: timeout, FirstByteTimeout: time.Second})
	info := func(raw string) LinkInfo {
		return LinkInfo{Site: SiteDirect, URL: raw, Duration: 2 * time.Minute, Size: int64(len(data))}
	}
	for _, c := range []struct{ name, url string }{
		{"cut at 10 s", srv.URL + "/cut.mp3"},
		{"trickling", srv.URL + "/trickle.mp3"},
		{"404", srv.URL + "/gone.mp3"},
		{"never answers", silent + "/talk.mp3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "clip.wav")
			start := time.Now()
			m, err := r.PreviewClip(context.Background(), info(c.url), dst, previewLength)
			took := time.Since(start)
			if !errors.Is(err, ErrSourceUnreachable) {
				t.Errorf("got %+v, %v; want ErrSourceUnreachable", m, err)
			}
			if took > timeout+10*time.Second {
				t.Errorf("took %v, bounded at %v", took, timeout)
			}
			if _, statErr := os.Stat(dst); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("a clip was left (stat: %v)", statErr)
			}
		})
	}
	// The caller's deadline bounds it as well, shorter than AnalyzeTimeout.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	slow := newLinkResolver(t, ResolverConfig{AnalyzeTimeout: time.Minute})
	if _, err := slow.PreviewClip(ctx, info(srv.URL+"/trickle.mp3"), filepath.Join(t.TempDir(), "c.wav"), previewLength); err == nil {
		t.Error("a trickle gave a preview")
	}
	if took := time.Since(start); took > 11*time.Second {
		t.Errorf("with a 1 s deadline: took %v", took)
	}
}

// TestLinkPreviewNotMedia: a link whose bytes are not audio fails as Analyze fails it.
func TestLinkPreviewNotMedia(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("<p>not a video</p>", 1000))
	}))
	t.Cleanup(srv.Close)
	r := newLinkResolver(t, ResolverConfig{})
	info := LinkInfo{Site: SiteDirect, URL: srv.URL + "/a.mp4", Duration: time.Minute, Size: 18000}
	if _, err := r.PreviewClip(context.Background(), info, filepath.Join(t.TempDir(), "c.wav"), previewLength); !errors.Is(err, ErrNotMedia) {
		t.Errorf("err = %v, want ErrNotMedia", err)
	}
}

// TestYouTubePreviewReadsTheStartOnly: a YouTube link's preview asks the stand-in for the
// first bytes of the audio stream only (a range of what 30 s need at its stated 56 kbit/s),
// or stops reading there when the stream's length is not given; the clip is 30 s of speech.
func TestYouTubePreviewReadsTheStartOnly(t *testing.T) {
	stream, err := os.ReadFile(longSpeech(t, t.TempDir(), "long.webm", 3*time.Minute, "-c:a", "libopus", "-b:a", "56k", "-f", "webm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, withLength := range []bool{true, false} {
		t.Run(fmt.Sprint("length given: ", withLength), func(t *testing.T) {
			fake := newYTFake(t)
			fake.media["249"] = stream
			fake.withLength = withLength
			r := newLinkResolver(t, ResolverConfig{Sites: []Site{fake.youTube(0)}, AnalyzeTimeout: time.Minute})
			ctx := context.Background()
			info, err := r.Analyze(ctx, "https://youtu.be/NormalVid01")
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "clip.wav")
			m, err := r.PreviewClip(ctx, info, dst, previewLength)
			if err != nil {
				t.Fatal(err)
			}
			checkClip(t, "youtube", m, dst)
			want := fmt.Sprintf("0-%d", startBytes(56_000, previewLength)-1)
			for _, req := range fake.streamRequests() {
				if withLength && req.Range != want {
					t.Errorf("stream asked for %q of %d bytes, want %q", req.Range, len(stream), want)
				}
			}
			if _, err := os.Stat(dst + ".start"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the fetched start was left behind (stat: %v)", err)
			}
		})
	}
}

// TestYouTubePreviewFetchesNoMoreThanItsStart: FetchStart saves only what startBytes allows,
// also when the stream's length is not given (the library then reads it in one request).
func TestYouTubePreviewFetchesNoMoreThanItsStart(t *testing.T) {
	for _, withLength := range []bool{true, false} {
		fake := newYTFake(t)
		fake.media["249"] = bytes.Repeat([]byte{7}, 2<<20)
		fake.withLength = withLength
		dst := filepath.Join(t.TempDir(), "start")
		if err := fake.youTube(0).FetchStart(context.Background(), "NormalVid01", dst, previewLength); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(dst)
		if err != nil || st.Size() != startBytes(56_000, previewLength) {
			t.Errorf("length given %t: saved %v (%v), want %d bytes", withLength, st.Size(), err, startBytes(56_000, previewLength))
		}
	}
}

// TestSitePreviewBoundsAndRefusals: a YouTube stream that never comes fails within the
// preview's time; a site without StartFetcher has no preview.
func TestSitePreviewBoundsAndRefusals(t *testing.T) {
	fake := newYTFake(t)
	fake.media["249"] = bytes.Repeat([]byte{1}, 1<<20)
	fake.onStream = func() bool { return true } // the stream never answers
	const timeout = 2 * time.Second
	r := newLinkResolver(t, ResolverConfig{Sites: []Site{fake.youTube(0)}, AnalyzeTimeout: timeout})
	info := LinkInfo{Site: "youtube", URL: "https://www.youtube.com/watch?v=NormalVid01", ID: "NormalVid01", Duration: 4 * time.Second}
	start := time.Now()
	_, err := r.PreviewClip(context.Background(), info, filepath.Join(t.TempDir(), "c.wav"), previewLength)
	if !errors.Is(err, ErrSourceUnreachable) {
		t.Errorf("a stalled stream: %v, want ErrSourceUnreachable", err)
	}
	if took := time.Since(start); took > timeout+10*time.Second {
		t.Errorf("a stalled stream took %v, bounded at %v", took, timeout)
	}

	other := NewResolver(ResolverConfig{Sites: []Site{&fakeSite{}}})
	_, err = other.PreviewClip(context.Background(), LinkInfo{Site: "fake", URL: "fake://abc", ID: "abc"}, "/nonexistent/c.wav", previewLength)
	if !errors.Is(err, ErrUnsupportedLink) || !strings.Contains(err.Error(), "no preview for this site") {
		t.Errorf("a site without previews: %v, want ErrUnsupportedLink", err)
	}
}
