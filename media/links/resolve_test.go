package links

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/media"
	"parla/providers/testkit"
)

// linkClips are media files made for link tests: the same few seconds of speech muxed into
// the containers video links come in, plus files that must be refused.
type linkClips struct {
	dir string
	// speech is the duration of the spoken audio every clip carries.
	speech time.Duration
}

// makeLinkClips writes the clips into a fresh directory with espeak-ng and ffmpeg.
func makeLinkClips(t testing.TB) linkClips {
	t.Helper()
	espeak := testkit.Binary(t, "espeak-ng")
	ffmpegBin := testkit.Binary(t, "ffmpeg")
	testkit.Binary(t, "ffprobe")
	dir := t.TempDir()
	wav := filepath.Join(dir, "speech.wav")
	run := func(name string, args ...string) {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v: %s", name, args, err, out)
		}
	}
	run(espeak, "-w", wav, "Hello. This short clip checks how video links are analysed and fetched.")
	speech, err := media.New(media.Config{}).Probe(context.Background(), wav)
	if err != nil {
		t.Fatal(err)
	}
	color := []string{"-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=blue:s=160x120:r=10"}
	// The video ends with the speech (-shortest overshoots by up to a second of buffering).
	withSpeech := append(slices.Clone(color), "-i", wav, "-t", fmt.Sprint(speech.Duration.Seconds()))
	h264 := []string{"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"}
	vp8 := []string{"-c:v", "libvpx", "-deadline", "realtime"}
	clips := map[string][]string{
		"fast.mp4":   slices.Concat(withSpeech, h264, []string{"-c:a", "aac", "-movflags", "+faststart"}),
		"slow.mp4":   slices.Concat(withSpeech, h264, []string{"-c:a", "aac"}),
		"clip.mkv":   slices.Concat(withSpeech, h264, []string{"-c:a", "libvorbis"}),
		"clip.webm":  slices.Concat(withSpeech, vp8, []string{"-c:a", "libopus"}),
		"silent.mp4": slices.Concat(color, []string{"-t", "3"}, h264),
		// A video whose sound track is silence: no speech to transcribe.
		"mute.mp4": slices.Concat(color, []string{"-f", "lavfi", "-i", "anullsrc=r=44100:cl=mono", "-t", "4"}, h264, []string{"-c:a", "aac"}),
		// Muxed as a live stream, a WebM carries no duration.
		"live.webm": slices.Concat(withSpeech, vp8, []string{"-c:a", "libopus", "-f", "webm", "-live", "1"}),
		"secret.ts": {"-nostdin", "-v", "error", "-y", "-i", wav, "-c:a", "aac", "-f", "mpegts"},
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(clips))
	for name, args := range clips {
		wg.Go(func() {
			out, err := exec.Command(ffmpegBin, append(args, filepath.Join(dir, name))...).CombinedOutput()
			if err != nil {
				errs <- fmt.Errorf("making %s: %v: %s", name, err, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return linkClips{dir: dir, speech: speech.Duration}
}

// path returns the local path of a clip.
func (c linkClips) path(name string) string { return filepath.Join(c.dir, name) }

// clipServer serves a directory the ways video hosts do: /files/ with Range support
// (http.ServeContent), /plain/ without Range, /live/ without a length, /short/ announcing
// more than it sends, /cut/ hanging up halfway, /slow/ in small slow pieces, /moved/ redirecting to /files/; /gone
// is a 404 and /page an HTML page. served counts the body bytes sent.
type clipServer struct {
	*httptest.Server
	served atomic.Int64
}

func serveClips(t testing.TB, dir string) *clipServer {
	t.Helper()
	cs := &clipServer{}
	mux := http.NewServeMux()
	open := func(w http.ResponseWriter, name string) *os.File {
		f, err := os.Open(filepath.Join(dir, filepath.Base(name)))
		if err != nil {
			http.NotFound(w, nil)
			return nil
		}
		w.Header().Set("Content-Type", mime.TypeByExtension(filepath.Ext(name)))
		return f
	}
	mux.HandleFunc("/files/{name}", func(w http.ResponseWriter, r *http.Request) {
		if f := open(w, r.PathValue("name")); f != nil {
			defer f.Close()
			http.ServeContent(countingWriter{w, &cs.served}, r, "", time.Time{}, f)
		}
	})
	mux.HandleFunc("/plain/{name}", func(w http.ResponseWriter, r *http.Request) {
		if f := open(w, r.PathValue("name")); f != nil {
			defer f.Close()
			st, _ := f.Stat()
			w.Header().Set("Content-Length", fmt.Sprint(st.Size()))
			io.Copy(countingWriter{w, &cs.served}, f)
		}
	})
	mux.HandleFunc("/live/{name}", func(w http.ResponseWriter, r *http.Request) {
		if f := open(w, r.PathValue("name")); f != nil {
			defer f.Close()
			w.(http.Flusher).Flush() // headers now, without a length: chunked
			io.Copy(countingWriter{w, &cs.served}, f)
		}
	})
	mux.HandleFunc("/short/{name}", func(w http.ResponseWriter, r *http.Request) {
		// Announces more than it sends, then hangs up: a transfer broken off.
		if f := open(w, r.PathValue("name")); f != nil {
			defer f.Close()
			st, _ := f.Stat()
			w.Header().Set("Content-Length", fmt.Sprint(st.Size()+4096))
			io.Copy(countingWriter{w, &cs.served}, f)
		}
	})
	mux.HandleFunc("/cut/{name}", func(w http.ResponseWriter, r *http.Request) {
		// Announces the whole file, sends the first half, hangs up: every time.
		if f := open(w, r.PathValue("name")); f != nil {
			defer f.Close()
			st, _ := f.Stat()
			w.Header().Set("Content-Length", fmt.Sprint(st.Size()))
			io.CopyN(countingWriter{w, &cs.served}, f, st.Size()/2)
		}
	})
	mux.HandleFunc("/slow/{name}", func(w http.ResponseWriter, r *http.Request) {
		if f := open(w, r.PathValue("name")); f != nil {
			defer f.Close()
			http.ServeContent(slowWriter{countingWriter{w, &cs.served}, w.(http.Flusher)}, r, "", time.Time{}, f)
		}
	})
	mux.HandleFunc("/moved/{name}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/files/"+r.PathValue("name"), http.StatusFound)
	})
	mux.HandleFunc("/gone", http.NotFound)
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><head><title>Video</title></head><body><video src=x.mp4></video>"+strings.Repeat("<p>text</p>", 500)+"</body></html>")
	})
	cs.Server = httptest.NewServer(mux)
	t.Cleanup(cs.Close)
	return cs
}

// slowWriter sends at most 16 KB at a time, 5 ms apart.
type slowWriter struct {
	http.ResponseWriter
	f http.Flusher
}

func (s slowWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k, err := s.ResponseWriter.Write(p[:min(len(p), 16<<10)])
		n += k
		if err != nil {
			return n, err
		}
		s.f.Flush()
		p = p[k:]
		time.Sleep(5 * time.Millisecond) // under test: a slow source
	}
	return n, nil
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

// within200ms reports |got-want| <= 0.2 s, the precision the price needs.
func within200ms(got, want time.Duration) bool {
	d := got - want
	return d >= -200*time.Millisecond && d <= 200*time.Millisecond
}

func newLinkResolver(t testing.TB, cfg ResolverConfig) *Resolver {
	t.Helper()
	if cfg.Guard == nil {
		cfg.Guard = NewGuard(GuardConfig{AllowPrivate: true})
		t.Cleanup(func() { cfg.Guard.Close() })
	}
	if cfg.Runner == nil {
		cfg.Runner = media.New(media.Config{MaxConcurrent: 4})
	}
	return NewResolver(cfg)
}

// TestDirectLinks analyses and fetches clips served over HTTP the ways video hosts serve
// them. The clips are made once: the subtests share them.
func TestDirectLinks(t *testing.T) {
	clips := makeLinkClips(t)
	srv := serveClips(t, clips.dir)
	t.Run("analyze", func(t *testing.T) { analyzeDirectLinks(t, clips, srv) })
	t.Run("refuse", func(t *testing.T) { analyzeRefuses(t, clips, srv) })
	t.Run("hls", func(t *testing.T) { analyzeHLSCannotEscape(t, clips, srv) })
	t.Run("fetch", func(t *testing.T) { fetchDirectAudio(t, clips, srv) })
}

func analyzeDirectLinks(t *testing.T, clips linkClips, srv *clipServer) {
	r := newLinkResolver(t, ResolverConfig{MaxDuration: time.Hour})
	for _, way := range []string{"files", "plain"} {
		for _, name := range []string{"fast.mp4", "slow.mp4", "clip.mkv", "clip.webm"} {
			t.Run(way+"/"+name, func(t *testing.T) {
				link := srv.URL + "/" + way + "/" + name
				info, err := r.Analyze(context.Background(), "  "+link+"#t=3\n")
				if err != nil {
					t.Fatalf("Analyze: %v", err)
				}
				if info.Site != SiteDirect || info.URL != link || info.ID != "" {
					t.Errorf("info = %+v", info)
				}
				if !within200ms(info.Duration, clips.speech) {
					t.Errorf("duration %s, want %s ± 0.2 s", info.Duration, clips.speech)
				}
				// A source without Range support that puts the MP4 index after the audio
				// can only be measured when ffmpeg still holds the start of the file in its
				// buffer once it has read the index, and that depends on how the bytes
				// arrived. Unmeasured is then an honest answer (the audio is measured again
				// when it is fetched after payment); a wrong measure never is.
				if way == "plain" && name == "slow.mp4" && !info.SpeechMeasured {
					if info.Speech != 0 {
						t.Errorf("unmeasured speech %v", info.Speech)
					}
					return
				}
				// The clip is speech from end to end, but for espeak-ng's quiet last breath.
				if !info.SpeechMeasured || info.Speech > info.Duration || info.Speech < info.Duration-media.SilenceMinimum {
					t.Errorf("speech %v (measured %v) in %v", info.Speech, info.SpeechMeasured, info.Duration)
				}
			})
		}
	}
	t.Run("silent sound track", func(t *testing.T) {
		info, err := r.Analyze(context.Background(), srv.URL+"/files/mute.mp4")
		if err != nil || !info.SpeechMeasured || info.Speech != 0 || !within200ms(info.Duration, 4*time.Second) {
			t.Errorf("got %+v, %v; want 4 s with no speech, measured", info, err)
		}
	})
	t.Run("too big to measure", func(t *testing.T) {
		small := newLinkResolver(t, ResolverConfig{SpeechMaxBytes: 1000})
		info, err := small.Analyze(context.Background(), srv.URL+"/files/fast.mp4")
		if err != nil || info.SpeechMeasured || info.Speech != 0 {
			t.Errorf("got %+v, %v; want the speech left unmeasured", info, err)
		}
	})
}

func analyzeRefuses(t *testing.T, clips linkClips, srv *clipServer) {
	r := newLinkResolver(t, ResolverConfig{})
	strict := NewGuard(GuardConfig{})
	t.Cleanup(func() { strict.Close() })
	short := newLinkResolver(t, ResolverConfig{MaxDuration: time.Second})

	tests := []struct {
		name string
		r    *Resolver
		link string
		want error
	}{
		{"html page", r, srv.URL + "/page", ErrNotMedia},
		{"404", r, srv.URL + "/gone", ErrSourceUnreachable},
		{"video without audio", r, srv.URL + "/files/silent.mp4", ErrNotMedia},
		{"stream without length or duration", r, srv.URL + "/live/live.webm", ErrLiveStream},
		{"too long", short, srv.URL + "/files/fast.mp4", ErrTooLong},
		{"private address", newLinkResolver(t, ResolverConfig{Guard: strict}), srv.URL + "/files/fast.mp4", ErrForbiddenAddress},
		{"ftp", r, "ftp://example.com/a.mp4", ErrUnsupportedLink},
		{"empty", r, "   ", ErrUnsupportedLink},
		{"over 2048 characters", r, srv.URL + "/files/fast.mp4?" + strings.Repeat("x", 2048), ErrUnsupportedLink},
		{"closed port", r, "http://127.0.0.1:1/a.mp4", ErrSourceUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := tt.r.Analyze(context.Background(), tt.link)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Analyze(%s) = %+v, %v; want %v", tt.link, info, err, tt.want)
			}
			if strings.Contains(err.Error(), "/t/") {
				t.Errorf("error names the relay URL: %v", err)
			}
			if tt.want == ErrTooLong && !within200ms(info.Duration, clips.speech) {
				t.Errorf("ErrTooLong came without the duration: %+v", info)
			}
		})
	}
}

// analyzeHLSCannotEscape serves playlists whose segment is a local file or a private
// HTTP address. Given the link directly, ffprobe follows both; through the resolver it must
// follow neither.
func analyzeHLSCannotEscape(t *testing.T, clips linkClips, srv *clipServer) {
	inner := listenCounting(t, "tcp4", "127.0.0.1:0")
	playlist := func(segment string) string {
		return "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:4.0,\n" + segment + "\n#EXT-X-ENDLIST\n"
	}
	files := map[string]string{
		"file.m3u8": playlist("file://" + clips.path("secret.ts")),
		"http.m3u8": playlist("http://127.0.0.1:" + inner.port() + "/secret.ts"),
	}
	for name, body := range files {
		if err := os.WriteFile(clips.path(name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := newLinkResolver(t, ResolverConfig{})

	// The control: plain ffprobe with file allowed reads the local segment, so the playlist
	// really is an attack and the refusal below is ours.
	var out bytes.Buffer
	err := r.cfg.Runner.FFprobe(context.Background(), []string{"-v", "error", "-protocol_whitelist", "file,http,tcp",
		"-show_entries", "format=duration", "-of", "csv=p=0", srv.URL + "/files/file.m3u8"}, &out)
	if err != nil || strings.TrimSpace(out.String()) == "" {
		t.Fatalf("control: ffprobe did not follow the playlist (%v, %q); the test proves nothing", err, out.String())
	}

	for name := range files {
		t.Run(name, func(t *testing.T) {
			info, err := r.Analyze(context.Background(), srv.URL+"/files/"+name)
			if !errors.Is(err, ErrNotMedia) {
				t.Fatalf("Analyze(%s) = %+v, %v; want %v", name, info, err, ErrNotMedia)
			}
		})
	}
	if n := inner.accepts.Load(); n != 0 {
		t.Errorf("the playlist's private HTTP segment was fetched %d times", n)
	}
}

func fetchDirectAudio(t *testing.T, clips linkClips, srv *clipServer) {
	r := newLinkResolver(t, ResolverConfig{})
	wantCodec := map[string]string{"fast.mp4": "aac", "slow.mp4": "aac", "clip.mkv": "vorbis", "clip.webm": "opus"}
	for name, codec := range wantCodec {
		t.Run(name, func(t *testing.T) {
			info, err := r.Analyze(context.Background(), srv.URL+"/files/"+name)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "audio.mka")
			if err := r.FetchAudio(context.Background(), info, dst); err != nil {
				t.Fatalf("FetchAudio: %v", err)
			}
			got, err := r.cfg.Runner.Probe(context.Background(), dst)
			if err != nil {
				t.Fatal(err)
			}
			if !within200ms(got.Duration, info.Duration) || got.Codec != codec || got.HasVideo {
				t.Errorf("fetched %+v, want %s of %s audio without video", got, info.Duration, codec)
			}
		})
	}

	t.Run("source gone", func(t *testing.T) {
		info := LinkInfo{Site: SiteDirect, URL: srv.URL + "/gone"}
		err := r.FetchAudio(context.Background(), info, filepath.Join(t.TempDir(), "a.mka"))
		if !errors.Is(err, ErrSourceUnreachable) {
			t.Fatalf("FetchAudio = %v, want %v", err, ErrSourceUnreachable)
		}
	})
	t.Run("bigger than MaxBytes", func(t *testing.T) {
		g := NewGuard(GuardConfig{AllowPrivate: true, MaxBytes: 20 << 10})
		t.Cleanup(func() { g.Close() })
		small := newLinkResolver(t, ResolverConfig{Guard: g})
		info := LinkInfo{Site: SiteDirect, URL: srv.URL + "/files/slow.mp4"}
		err := small.FetchAudio(context.Background(), info, filepath.Join(t.TempDir(), "a.mka"))
		if !errors.Is(err, ErrSourceUnreachable) {
			t.Fatalf("FetchAudio = %v, want %v", err, ErrSourceUnreachable)
		}
	})
	t.Run("private address", func(t *testing.T) {
		strict := NewGuard(GuardConfig{})
		t.Cleanup(func() { strict.Close() })
		info := LinkInfo{Site: SiteDirect, URL: srv.URL + "/files/fast.mp4"}
		err := newLinkResolver(t, ResolverConfig{Guard: strict}).FetchAudio(context.Background(), info, filepath.Join(t.TempDir(), "a.mka"))
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("FetchAudio = %v, want %v", err, ErrForbiddenAddress)
		}
	})
}

// fakeSite reads "fake://<id>" links.
type fakeSite struct {
	fetched []string
}

func (s *fakeSite) Match(raw string) (string, bool) {
	return strings.CutPrefix(raw, "fake://")
}

func (s *fakeSite) Analyze(_ context.Context, id string) (LinkInfo, error) {
	if id == "private" {
		return LinkInfo{}, ErrVideoUnavailable
	}
	return LinkInfo{Site: "fake", URL: "fake://" + id, ID: id, Title: "A title", Duration: 90 * time.Second}, nil
}

func (s *fakeSite) FetchAudio(_ context.Context, id, dst string) error {
	s.fetched = append(s.fetched, id+" "+dst)
	return nil
}

func TestResolverHandsSiteLinksToTheirSite(t *testing.T) {
	site := &fakeSite{}
	r := NewResolver(ResolverConfig{Sites: []Site{site}, MaxDuration: time.Minute})
	info, err := r.Analyze(context.Background(), " fake://abc ")
	if !errors.Is(err, ErrTooLong) || info.ID != "abc" || info.Title != "A title" {
		t.Fatalf("Analyze = %+v, %v; want the site's info and %v (90 s > 1 min)", info, err, ErrTooLong)
	}
	r = NewResolver(ResolverConfig{Sites: []Site{site}})
	if _, err := r.Analyze(context.Background(), "fake://private"); !errors.Is(err, ErrVideoUnavailable) {
		t.Fatalf("Analyze(private) = %v, want %v", err, ErrVideoUnavailable)
	}
	info, err = r.Analyze(context.Background(), "fake://abc")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.FetchAudio(context.Background(), info, "/tmp/x.mka"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(site.fetched, []string{"abc /tmp/x.mka"}) {
		t.Errorf("site fetched %q", site.fetched)
	}
	unknown := LinkInfo{Site: "other", URL: "other://x"}
	if err := r.FetchAudio(context.Background(), unknown, "/tmp/x.mka"); !errors.Is(err, ErrUnsupportedLink) {
		t.Errorf("FetchAudio(unknown site) = %v, want %v", err, ErrUnsupportedLink)
	}
}
