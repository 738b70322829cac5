package links

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kkdai/youtube/v2"

	"parla/media"
	"parla/providers/testkit"
)

func TestMatchYouTube(t *testing.T) {
	const id = "NormalVid01"
	tests := []struct {
		raw    string
		wantID string // empty: not matched
	}{
		{"https://www.youtube.com/watch?v=NormalVid01", id},
		{"http://www.youtube.com/watch?v=NormalVid01", id},
		{"https://youtube.com/watch?v=NormalVid01", id},
		{"https://m.youtube.com/watch?v=NormalVid01", id},
		{"https://music.youtube.com/watch?v=NormalVid01&list=RDAMVM", id},
		{"https://WWW.YouTube.com/watch?v=NormalVid01", id},
		{"HTTPS://www.youtube.com/watch?v=NormalVid01", id},
		{"  https://www.youtube.com/watch?v=NormalVid01\n", id},
		{"https://www.youtube.com/watch?v=NormalVid01&t=42s", id},
		{"https://www.youtube.com/watch?feature=share&v=NormalVid01&si=abc", id},
		{"https://www.youtube.com/watch?v=a_b-C_d-E_f", "a_b-C_d-E_f"},
		{"https://youtu.be/NormalVid01", id},
		{"https://youtu.be/NormalVid01?si=xyz&t=3", id},
		{"https://youtu.be/NormalVid01/", id},
		{"https://www.youtube.com/shorts/NormalVid01", id},
		{"https://youtube.com/shorts/NormalVid01?feature=share", id},
		{"https://www.youtube.com/embed/NormalVid01?start=10", id},
		{"https://www.youtube.com/live/NormalVid01?si=x", id},
		{"https://www.youtube.com/v/NormalVid01", id},
		{"https://www.youtube-nocookie.com/embed/NormalVid01", id},
		{"https://youtube-nocookie.com/embed/NormalVid01", id},

		// Near misses.
		{"https://youtube.com.evil.com/watch?v=NormalVid01", ""},
		{"https://evil.com/youtube.com/watch?v=NormalVid01", ""},
		{"https://evil.com/watch?v=NormalVid01&u=youtube.com", ""},
		{"https://notyoutube.com/watch?v=NormalVid01", ""},
		{"https://youtu.be.evil.com/NormalVid01", ""},
		{"https://www.youtube.com.:443/watch?v=NormalVid01", ""},
		{"https://www.youtube.com:8443/watch?v=NormalVid01", ""},
		{"https://user@www.youtube.com/watch?v=NormalVid01", ""},
		{"https://evil.com@youtu.be/NormalVid01", ""},
		{"ftp://youtu.be/NormalVid01", ""},
		{"javascript://youtu.be/NormalVid01", ""},
		{"file:///youtu.be/NormalVid01", ""},
		{"youtu.be/NormalVid01", ""},
		{"//youtu.be/NormalVid01", ""},
		{"www.youtube.com/watch?v=NormalVid01", ""},
		{"https:youtu.be/NormalVid01", ""},
		{"NormalVid01", ""},
		{"", ""},
		{"https://www.youtube.com/watch?v=NormalVid0", ""},   // 10 characters
		{"https://www.youtube.com/watch?v=NormalVid012", ""}, // 12 characters
		{"https://www.youtube.com/watch?v=Normal%20Vid", ""}, // space
		{"https://www.youtube.com/watch?v=Normal.Vid1", ""},  // dot
		{"https://www.youtube.com/watch?list=PL0123456789", ""},
		{"https://www.youtube.com/watch/NormalVid01", ""},
		{"https://www.youtube.com/watchv=NormalVid01", ""},
		{"https://www.youtube.com/", ""},
		{"https://www.youtube.com/@someone", ""},
		{"https://www.youtube.com/channel/UCfakechann", ""},
		{"https://www.youtube.com/playlist?list=PLNormalVid01", ""},
		{"https://www.youtube.com/shorts/NormalVid01/extra", ""},
		{"https://www.youtube.com/embed/", ""},
		{"https://youtu.be/", ""},
		{"https://youtu.be/watch?v=NormalVid01", ""},
		{"https://youtu.be/NormalVid01/x", ""},
		{"https://www.youtube-nocookie.com/watch?v=NormalVid01", ""},
		{"https://i.ytimg.com/vi/NormalVid01/hqdefault.jpg", ""},
		{"https://rr1---sn-abc.googlevideo.com/videoplayback?id=NormalVid01", ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			id, ok := matchYouTube(tt.raw)
			if ok != (tt.wantID != "") || id != tt.wantID {
				t.Errorf("matchYouTube(%q) = %q, %t; want %q", tt.raw, id, ok, tt.wantID)
			}
		})
	}
}

func TestPickAudioFormat(t *testing.T) {
	muxed := youtube.Format{ItagNo: 18, MimeType: `video/mp4; codecs="avc1.42001E, mp4a.40.2"`, Bitrate: 500_000, AudioChannels: 2}
	video := youtube.Format{ItagNo: 137, MimeType: `video/mp4; codecs="avc1.640028"`, Bitrate: 4_000_000}
	m4a := youtube.Format{ItagNo: 140, MimeType: `audio/mp4; codecs="mp4a.40.2"`, Bitrate: 130_000}
	heaac := youtube.Format{ItagNo: 599, MimeType: `audio/mp4; codecs="mp4a.40.5"`, Bitrate: 31_000}
	opusLow := youtube.Format{ItagNo: 249, MimeType: `audio/webm; codecs="opus"`, Bitrate: 56_000}
	opusMid := youtube.Format{ItagNo: 250, MimeType: `audio/webm; codecs="opus"`, Bitrate: 70_000}
	opusHigh := youtube.Format{ItagNo: 251, MimeType: `audio/webm; codecs="opus"`, Bitrate: 140_000}
	opusTiny := youtube.Format{ItagNo: 600, MimeType: `audio/webm; codecs="opus"`, Bitrate: 35_000}
	exact := youtube.Format{ItagNo: 139, MimeType: `audio/mp4; codecs="mp4a.40.5"`, Bitrate: 48_000}
	exactOpus := youtube.Format{ItagNo: 249, MimeType: `audio/webm; codecs="opus"`, Bitrate: 48_000}
	dubbed := func(f youtube.Format, isDefault bool) youtube.Format {
		f.AudioTrack = &struct {
			DisplayName    string `json:"displayName"`
			ID             string `json:"id"`
			AudioIsDefault bool   `json:"audioIsDefault"`
		}{DisplayName: "x", ID: "x.4", AudioIsDefault: isDefault}
		return f
	}
	heaacAt := func(bitrate int) youtube.Format { f := heaac; f.Bitrate = bitrate; return f }
	dubbedLow := dubbed(opusLow, false)
	originalHigh := dubbed(opusHigh, true)

	tests := []struct {
		name     string
		formats  youtube.FormatList
		wantItag int
		wantErr  error
	}{
		{"lowest adequate of a typical list", youtube.FormatList{muxed, video, opusHigh, m4a, heaac, opusMid, opusLow}, 249, nil},
		{"order does not matter", youtube.FormatList{opusLow, opusMid, m4a, opusHigh, muxed}, 249, nil},
		{"m4a when it is the only adequate", youtube.FormatList{muxed, video, m4a, heaac}, 140, nil},
		{"exactly the floor counts", youtube.FormatList{m4a, exact}, 139, nil},
		{"tie goes to the lower itag", youtube.FormatList{exactOpus, exact}, 139, nil},
		{"best when all are below the floor", youtube.FormatList{muxed, heaac, opusTiny}, 600, nil},
		{"below the floor, a tie goes to the lower itag too", youtube.FormatList{opusTiny, heaacAt(35_000)}, 599, nil},
		{"single audio format", youtube.FormatList{heaac}, 599, nil},
		{"mime type case ignored", youtube.FormatList{{ItagNo: 9, MimeType: "Audio/MP4", Bitrate: 64_000}}, 9, nil},
		{"default track over a cheaper dub", youtube.FormatList{dubbedLow, originalHigh, muxed}, 251, nil},
		{"untagged tracks stay eligible", youtube.FormatList{dubbedLow, m4a}, 140, nil},
		{"only dubs: still audio", youtube.FormatList{dubbedLow}, 249, nil},
		{"never the muxed stream", youtube.FormatList{muxed, video}, 0, ErrNotMedia},
		{"no formats", nil, 0, ErrNotMedia},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := pickAudioFormat(tt.formats)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if errors.Is(err, ErrPlatformUnreachable) {
					t.Errorf("a video YouTube answered for reads as YouTube unreachable: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.ItagNo != tt.wantItag {
				t.Errorf("picked itag %d, want %d", f.ItagNo, tt.wantItag)
			}
		})
	}
}

// ytFixtures names the fake's videos: id → file in testdata/youtube.
var ytFixtures = map[string]string{
	"NormalVid01": "normal.json",
	"LiveStream1": "live.json",
	"Upcoming001": "upcoming.json",
	"PrivateVid1": "private.json",
	"AgeGated001": "agegated.json",
	"RemovedVid1": "removed.json",
	"BlockedVid1": "blocked.json",
	"VideoOnly01": "videoonly.json",
}

// ytRequest is one request the fake YouTube received.
type ytRequest struct {
	Host, Path string
	Itag       string // /videoplayback only
	Range      string // /videoplayback only
	Client     string // player API only: the innertube client name
	VideoID    string // player API only
}

// ytFake speaks the part of YouTube that kkdai/youtube v2.10.x uses: the home page for a
// visitor id, the innertube player API, the watch page (fallback when embedding is off), the
// embed page and player script (read before every stream URL), and googlevideo streams with
// the `range=a-b` query parameter the library downloads in.
type ytFake struct {
	t   *testing.T
	srv *httptest.Server
	// media is what each itag's stream serves.
	media map[string][]byte
	// withLength puts contentLength on stream formats, which makes the library download in
	// ranged pieces; without it the library reads the stream in one request.
	withLength bool
	// drop removes formats with these itags from player answers.
	drop []int
	// fail answers the path with this status.
	fail map[string]int
	// onStream, when set, runs as a stream request arrives; a stream answer waits for the
	// client to go away when it returns true.
	onStream func() (stall bool)

	mu       sync.Mutex
	requests []ytRequest
}

func newYTFake(t *testing.T) *ytFake {
	f := &ytFake{t: t, media: map[string][]byte{}, withLength: true, fail: map[string]int{}}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

// youTube returns the site reader under test, its HTTP client pointed at the fake.
func (f *ytFake) youTube(maxBytes int64) *YouTube {
	return NewYouTube(YouTubeConfig{
		HTTPClient: &http.Client{Transport: ytRewrite{addr: f.srv.Listener.Addr().String()}, Timeout: 30 * time.Second},
		MaxBytes:   maxBytes,
	})
}

// ytRewrite sends requests for YouTube's hosts to the fake, keeping the Host header so the
// fake can tell them apart, and refuses every other host.
type ytRewrite struct{ addr string }

func (rw ytRewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Hostname()
	switch {
	case host == "www.youtube.com", host == "youtube.com", host == "m.youtube.com",
		host == "youtubei.googleapis.com", host == "i.ytimg.com",
		strings.HasSuffix(host, ".googlevideo.com"):
	default:
		return nil, fmt.Errorf("test transport: unexpected host %q", host)
	}
	out := req.Clone(req.Context())
	out.URL.Scheme = "http"
	out.URL.Host = rw.addr
	out.Host = host
	return http.DefaultTransport.RoundTrip(out)
}

func (f *ytFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := ytRequest{Host: r.Host, Path: r.URL.Path}
	if r.URL.Path == "/videoplayback" {
		rec.Itag, rec.Range = r.URL.Query().Get("itag"), r.URL.Query().Get("range")
	}
	defer func() { f.mu.Lock(); f.requests = append(f.requests, rec); f.mu.Unlock() }()
	if status := f.fail[r.URL.Path]; status != 0 {
		http.Error(w, "failing on purpose", status)
		return
	}
	switch {
	case r.Host == "www.youtube.com" && r.URL.Path == "/":
		// The library reads its visitor id from the ytcfg of the home page.
		io.WriteString(w, "<!DOCTYPE html><html><script>var a=1;\nytcfg.set("+
			`{"INNERTUBE_CONTEXT":{"client":{"visitorData":"CgtGYWtlVmlzaXRvcg%3D%3D","hl":"en"}}});`+
			"</script></html>")
	case r.Host == "www.youtube.com" && r.URL.Path == "/youtubei/v1/player" && r.Method == http.MethodPost:
		var body struct {
			VideoID string `json:"videoId"`
			Context struct {
				Client struct {
					ClientName string `json:"clientName"`
				} `json:"client"`
			} `json:"context"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec.VideoID, rec.Client = body.VideoID, body.Context.Client.ClientName
		w.Header().Set("Content-Type", "application/json")
		w.Write(f.playerResponse(body.VideoID))
	case r.Host == "www.youtube.com" && r.URL.Path == "/watch":
		fmt.Fprintf(w, "<html><script>var ytInitialPlayerResponse = %s;var meta = {};</script></html>",
			f.playerResponse(r.URL.Query().Get("v")))
	case r.Host == "youtube.com" && strings.HasPrefix(r.URL.Path, "/embed/"):
		io.WriteString(w, `<html><script src="/s/player/0fake123/player_ias.vflset/en_US/base.js"></script></html>`)
	case r.Host == "youtube.com" && r.URL.Path == "/s/player/0fake123/player_ias.vflset/en_US/base.js":
		// Stream URLs carry no n-parameter here, so the script is fetched but never run.
		io.WriteString(w, "var _yt_player={};")
	case strings.HasSuffix(r.Host, ".googlevideo.com") && r.URL.Path == "/videoplayback":
		if f.onStream != nil && f.onStream() {
			<-r.Context().Done()
			return
		}
		f.serveStream(w, rec.Itag, rec.Range)
	default:
		http.NotFound(w, r)
	}
}

// playerResponse is the fixture of id as the player API answers it: compact JSON (the watch
// page embeds it on one line), without the dropped formats, with contentLength if asked.
func (f *ytFake) playerResponse(id string) []byte {
	name, ok := ytFixtures[id]
	if !ok {
		// YouTube's answer for an id that does not exist.
		return []byte(`{"playabilityStatus":{"status":"ERROR","reason":"This video is unavailable","playableInEmbed":false}}`)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "youtube", name))
	if err != nil {
		f.t.Errorf("fixture: %v", err)
		return nil
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		f.t.Errorf("fixture %s: %v", name, err)
		return nil
	}
	if sd, ok := doc["streamingData"].(map[string]any); ok {
		for _, key := range []string{"formats", "adaptiveFormats"} {
			list, _ := sd[key].([]any)
			kept := []any{}
			for _, item := range list {
				format := item.(map[string]any)
				itag := int(format["itag"].(float64))
				if slices.Contains(f.drop, itag) {
					continue
				}
				if data, ok := f.media[strconv.Itoa(itag)]; ok && f.withLength {
					format["contentLength"] = strconv.Itoa(len(data))
				}
				kept = append(kept, format)
			}
			sd[key] = kept
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		f.t.Errorf("fixture %s: %v", name, err)
	}
	return out
}

// serveStream answers a googlevideo request: the whole stream, or the bytes of `range=a-b`.
func (f *ytFake) serveStream(w http.ResponseWriter, itag, rng string) {
	data, ok := f.media[itag]
	if !ok {
		data = []byte("not a stream the test expects to be read")
	}
	if rng != "" {
		a, b, ok := strings.Cut(rng, "-")
		start, err1 := strconv.Atoi(a)
		end, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || start > end || end >= len(data) {
			http.Error(w, "bad range "+rng, http.StatusRequestedRangeNotSatisfiable)
			return
		}
		data = data[start : end+1]
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}

// seen returns the requests so far.
func (f *ytFake) seen() []ytRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// streamRequests returns the googlevideo requests so far.
func (f *ytFake) streamRequests() []ytRequest {
	var out []ytRequest
	for _, r := range f.seen() {
		if r.Path == "/videoplayback" {
			out = append(out, r)
		}
	}
	return out
}

// ytSpeech makes 4 s of espeak-ng speech (padded with silence) encoded by ffmpeg with codec.
func ytSpeech(t *testing.T, codec ...string) []byte {
	t.Helper()
	espeak := testkit.Binary(t, "espeak-ng")
	ffmpeg := testkit.Binary(t, "ffmpeg")
	dir := t.TempDir()
	wav := filepath.Join(dir, "speech.wav")
	if out, err := exec.Command(espeak, "-w", wav, "Parla reads the sound of a video.").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-i", wav,
		"-af", "apad", "-t", "4"}, codec...)
	cmd := exec.Command(ffmpeg, append(args, "pipe:1")...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, stderr.String())
	}
	return out.Bytes()
}

func ytWebm(t *testing.T) []byte {
	return ytSpeech(t, "-c:a", "libopus", "-b:a", "48k", "-f", "webm")
}

func ytM4A(t *testing.T) []byte {
	// Fragmented so the MP4 can be written to a pipe.
	return ytSpeech(t, "-c:a", "aac", "-b:a", "64k", "-movflags", "frag_keyframe+empty_moov", "-f", "mp4")
}

func TestYouTubeAnalyze(t *testing.T) {
	tests := []struct {
		id        string
		wantTitle string
		wantDur   time.Duration
		wantErr   error
	}{
		{id: "NormalVid01", wantTitle: "Parla test: a short spoken sentence", wantDur: 4 * time.Second},
		{id: "LiveStream1", wantErr: ErrLiveStream},
		{id: "Upcoming001", wantErr: ErrLiveStream},
		{id: "PrivateVid1", wantErr: ErrVideoUnavailable},
		{id: "AgeGated001", wantErr: ErrVideoUnavailable},
		{id: "RemovedVid1", wantErr: ErrVideoUnavailable},
		{id: "BlockedVid1", wantErr: ErrVideoUnavailable},
		{id: "Missing0000", wantErr: ErrVideoUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			fake := newYTFake(t)
			info, err := fake.youTube(0).Analyze(context.Background(), tt.id)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if errors.Is(err, ErrPlatformUnreachable) {
					t.Errorf("a video YouTube answered for reads as YouTube unreachable: %v", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				want := LinkInfo{Site: "youtube", URL: "https://www.youtube.com/watch?v=" + tt.id, ID: tt.id,
					Title: tt.wantTitle, Duration: tt.wantDur}
				if info != want {
					t.Errorf("info = %+v, want %+v", info, want)
				}
			}
			if got := fake.streamRequests(); len(got) != 0 {
				t.Errorf("Analyze downloaded streams: %+v", got)
			}
		})
	}
}

func TestYouTubeAnalyzeFollowsLibraryFallbacks(t *testing.T) {
	// Age-gated: the library retries as the embedded player before giving up.
	fake := newYTFake(t)
	_, err := fake.youTube(0).Analyze(context.Background(), "AgeGated001")
	if !errors.Is(err, ErrVideoUnavailable) || !errors.Is(err, youtube.ErrLoginRequired) {
		t.Fatalf("age-gated: err = %v", err)
	}
	var clients []string
	for _, r := range fake.seen() {
		if r.Client != "" {
			clients = append(clients, r.Client)
		}
	}
	if !slices.Equal(clients, []string{"ANDROID", "WEB_EMBEDDED_PLAYER"}) {
		t.Errorf("player API clients = %v", clients)
	}

	// Removed (not embeddable): the library reads the watch page, whose reason we keep.
	fake = newYTFake(t)
	_, err = fake.youTube(0).Analyze(context.Background(), "RemovedVid1")
	var status *youtube.ErrPlayabiltyStatus
	if !errors.Is(err, ErrVideoUnavailable) || !errors.As(err, &status) || status.Reason != "Video unavailable" {
		t.Fatalf("removed: err = %v", err)
	}
	if !slices.ContainsFunc(fake.seen(), func(r ytRequest) bool { return r.Path == "/watch" }) {
		t.Error("removed: the watch page was not read")
	}

	// The reason reaches the message, for logs.
	fake = newYTFake(t)
	_, err = fake.youTube(0).Analyze(context.Background(), "BlockedVid1")
	if err == nil || !strings.Contains(err.Error(), "not made this video available in your country") {
		t.Errorf("blocked: err = %v", err)
	}
}

func TestYouTubeAnalyzeUnreachable(t *testing.T) {
	for _, tt := range []struct {
		name   string
		path   string
		status int
	}{
		{"player API 500", "/youtubei/v1/player", http.StatusInternalServerError},
		{"player API 404", "/youtubei/v1/player", http.StatusNotFound},
		{"player API 429", "/youtubei/v1/player", http.StatusTooManyRequests},
		{"home page 503", "/", http.StatusServiceUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := newYTFake(t)
			fake.fail[tt.path] = tt.status
			_, err := fake.youTube(0).Analyze(context.Background(), "NormalVid01")
			var code youtube.ErrUnexpectedStatusCode
			if !errors.Is(err, ErrSourceUnreachable) || !errors.As(err, &code) || int(code) != tt.status {
				t.Fatalf("err = %v, want ErrSourceUnreachable with status %d", err, tt.status)
			}
			if !errors.Is(err, ErrPlatformUnreachable) {
				t.Errorf("err = %v, want ErrPlatformUnreachable (our trouble, not the link's)", err)
			}
		})
	}

	t.Run("garbage JSON", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html>not json</html>")
		}))
		defer srv.Close()
		y := NewYouTube(YouTubeConfig{HTTPClient: &http.Client{Transport: ytRewrite{addr: srv.Listener.Addr().String()}}})
		if _, err := y.Analyze(context.Background(), "NormalVid01"); !errors.Is(err, ErrSourceUnreachable) || !errors.Is(err, ErrPlatformUnreachable) {
			t.Fatalf("err = %v, want ErrSourceUnreachable and ErrPlatformUnreachable", err)
		}
	})

	t.Run("nothing listening", func(t *testing.T) {
		y := NewYouTube(YouTubeConfig{HTTPClient: &http.Client{Transport: ytRewrite{addr: testkit.FreePort(t)}}})
		if _, err := y.Analyze(context.Background(), "NormalVid01"); !errors.Is(err, ErrSourceUnreachable) || !errors.Is(err, ErrPlatformUnreachable) {
			t.Fatalf("err = %v, want ErrSourceUnreachable and ErrPlatformUnreachable", err)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		fake := newYTFake(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := fake.youTube(0).Analyze(ctx, "NormalVid01")
		if !errors.Is(err, ErrSourceUnreachable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want ErrSourceUnreachable and context.Canceled", err)
		}
	})
}

func TestYouTubeRejectsBadIDs(t *testing.T) {
	fake := newYTFake(t)
	y := fake.youTube(0)
	for _, id := range []string{"", "short", "NormalVid012", "../../etc/pa", "Normal?Vid1", "https://youtu.be/NormalVid01"} {
		if _, err := y.Analyze(context.Background(), id); !errors.Is(err, ErrUnsupportedLink) {
			t.Errorf("Analyze(%q) err = %v, want ErrUnsupportedLink", id, err)
		}
		dst := filepath.Join(t.TempDir(), "a")
		if err := y.FetchAudio(context.Background(), id, dst); !errors.Is(err, ErrUnsupportedLink) {
			t.Errorf("FetchAudio(%q) err = %v, want ErrUnsupportedLink", id, err)
		}
	}
	if got := fake.seen(); len(got) != 0 {
		t.Errorf("bad ids reached the network: %+v", got)
	}
}

func TestYouTubeFetchAudio(t *testing.T) {
	runner := newRunner(t)
	webm, m4a := ytWebm(t), ytM4A(t)
	tests := []struct {
		name       string
		withLength bool
		chunk      int64
		drop       []int
		wantItag   string
		wantCodec  string
		wantData   []byte
		minStreams int // requests to googlevideo
	}{
		{name: "opus in ranged pieces", withLength: true, chunk: 4096, wantItag: "249", wantCodec: "opus", wantData: webm, minStreams: 2},
		{name: "opus in one piece of the default size", withLength: true, wantItag: "249", wantCodec: "opus", wantData: webm, minStreams: 1},
		{name: "opus without a length", withLength: false, wantItag: "249", wantCodec: "opus", wantData: webm, minStreams: 1},
		{name: "m4a when no opus is offered", withLength: true, chunk: 8192, drop: []int{249, 251}, wantItag: "140", wantCodec: "aac", wantData: m4a, minStreams: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newYTFake(t)
			fake.media["249"], fake.media["251"], fake.media["140"] = webm, webm, m4a
			fake.withLength, fake.drop = tt.withLength, tt.drop
			y := fake.youTube(0)
			if tt.chunk > 0 {
				y.chunkSize = tt.chunk
			}
			dst := filepath.Join(t.TempDir(), "audio")
			if err := y.FetchAudio(context.Background(), "NormalVid01", dst); err != nil {
				t.Fatal(err)
			}

			streams := fake.streamRequests()
			if len(streams) < tt.minStreams {
				t.Errorf("%d stream requests, want at least %d", len(streams), tt.minStreams)
			}
			for _, r := range streams {
				if r.Itag != tt.wantItag {
					t.Errorf("requested itag %s (range %q), want only %s", r.Itag, r.Range, tt.wantItag)
				}
				if tt.withLength == (r.Range == "") {
					t.Errorf("request range %q with length known: %t", r.Range, tt.withLength)
				}
			}
			got, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.wantData) {
				t.Fatalf("downloaded %d bytes, not the %d of itag %s", len(got), len(tt.wantData), tt.wantItag)
			}
			info, err := runner.Probe(context.Background(), dst)
			if err != nil {
				t.Fatal(err)
			}
			if info.Codec != tt.wantCodec || info.HasVideo || !near(info.Duration, 4*time.Second, 0.02) {
				t.Errorf("probe = %+v, want %s audio of 4s", info, tt.wantCodec)
			}
		})
	}
}

func TestYouTubeFetchAudioFailures(t *testing.T) {
	webm := ytWebm(t)
	tests := []struct {
		name       string
		id         string
		maxBytes   int64
		withLength bool
		fail       map[string]int
		wantErr    error
		wantNoHit  bool // no stream request may be made
	}{
		{name: "stream answers 403", id: "NormalVid01", withLength: true, fail: map[string]int{"/videoplayback": 403}, wantErr: ErrSourceUnreachable},
		{name: "stream answers 500 without length", id: "NormalVid01", fail: map[string]int{"/videoplayback": 500}, wantErr: ErrSourceUnreachable},
		{name: "player script missing", id: "NormalVid01", withLength: true, fail: map[string]int{"/s/player/0fake123/player_ias.vflset/en_US/base.js": 404}, wantErr: ErrSourceUnreachable, wantNoHit: true},
		{name: "declared length over the limit", id: "NormalVid01", maxBytes: 1000, withLength: true, wantErr: ErrSourceUnreachable, wantNoHit: true},
		{name: "stream over the limit", id: "NormalVid01", maxBytes: 1000, wantErr: ErrSourceUnreachable},
		{name: "no audio-only stream", id: "VideoOnly01", withLength: true, wantErr: ErrNotMedia, wantNoHit: true},
		{name: "live", id: "LiveStream1", withLength: true, wantErr: ErrLiveStream, wantNoHit: true},
		{name: "private", id: "PrivateVid1", withLength: true, wantErr: ErrVideoUnavailable, wantNoHit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newYTFake(t)
			fake.media["249"], fake.media["251"], fake.media["140"] = webm, webm, webm
			fake.withLength = tt.withLength
			maps.Copy(fake.fail, tt.fail)
			dst := filepath.Join(t.TempDir(), "audio")
			err := fake.youTube(tt.maxBytes).FetchAudio(context.Background(), tt.id, dst)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if _, statErr := os.Stat(dst); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("dst left behind after %v (stat: %v)", err, statErr)
			}
			if hits := fake.streamRequests(); tt.wantNoHit && len(hits) != 0 {
				t.Errorf("stream requested: %+v", hits)
			}
			for _, r := range fake.streamRequests() {
				if r.Itag != "249" {
					t.Errorf("requested itag %s", r.Itag)
				}
			}
		})
	}
}

func TestYouTubeFetchAudioCancelled(t *testing.T) {
	tests := []struct {
		name       string
		before     bool // cancel before the call, else once the stream is requested
		withLength bool
	}{
		{name: "before the call", before: true, withLength: true},
		{name: "mid-stream in pieces", withLength: true},
		{name: "mid-stream in one request", withLength: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newYTFake(t)
			fake.media["249"] = bytes.Repeat([]byte{1}, 1<<16)
			fake.withLength = tt.withLength
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.before {
				cancel()
			}
			fake.onStream = func() bool { cancel(); return true }
			dst := filepath.Join(t.TempDir(), "audio")
			err := fake.youTube(0).FetchAudio(ctx, "NormalVid01", dst)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if _, statErr := os.Stat(dst); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("dst left behind (stat: %v)", statErr)
			}
			fake.srv.Close() // waits for the stalled handler to be recorded
			if n := len(fake.streamRequests()); tt.before != (n == 0) {
				t.Errorf("%d stream requests", n)
			}
		})
	}
}

func TestYouTubeConcurrentCallsStayApart(t *testing.T) {
	// An age-gated video switches the library's client to the embedded player; calls for
	// other videos at the same time must not be affected (and -race must stay quiet).
	fake := newYTFake(t)
	y := fake.youTube(0)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			id := "NormalVid01"
			if i%2 == 1 {
				id = "AgeGated001"
			}
			_, err := y.Analyze(context.Background(), id)
			if id == "NormalVid01" && err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, r := range fake.seen() {
		if r.VideoID == "NormalVid01" && r.Client != "ANDROID" {
			t.Errorf("NormalVid01 asked as %s", r.Client)
		}
	}
}

func TestSaveStreamKeepsLocalErrorsApart(t *testing.T) {
	// A directory that does not exist is our fault, not the source's.
	err := saveStream(filepath.Join(t.TempDir(), "missing", "a"), strings.NewReader("abc"), 10)
	if err == nil || errors.Is(err, ErrSourceUnreachable) {
		t.Errorf("err = %v, want a local error", err)
	}
	// Exactly the limit is fine.
	dst := filepath.Join(t.TempDir(), "a")
	if err := saveStream(dst, strings.NewReader("abc"), 3); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	if err := saveStream(dst, strings.NewReader("abcd"), 3); !errors.Is(err, ErrSourceUnreachable) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("oversized file left behind: %v", err)
	}
}

func newRunner(t *testing.T) *media.Runner {
	t.Helper()
	testkit.Binary(t, "ffmpeg")
	testkit.Binary(t, "ffprobe")
	r := media.New(media.Config{MaxConcurrent: 2, TempDir: t.TempDir()})
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	return r
}

// near reports got within tolerance (relative) of want, plus 80 ms for the encoder delay and
// padding that lossy codecs add at the ends.
func near(got, want time.Duration, tolerance float64) bool {
	d := math.Abs(float64(got - want))
	return d <= tolerance*float64(want)+float64(80*time.Millisecond)
}
