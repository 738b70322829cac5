package openai

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

	goopenai "github.com/sashabaranov/go-openai"

	"parla/media"
	"parla/providers"
	"parla/providers/testkit"
)

// sttCall is one transcription request the fake API received, as it checked it.
type sttCall struct {
	Endpoint    string // "transcriptions" or "translations"
	Auth        string
	Model       string
	Format      string
	Granularity string
	Chunking    string // chunking_strategy
	Language    string
	Prompt      string
	Temperature string
	Filename    string
	Size        int64
	Sum         [32]byte
	Info        media.ProbeInfo // ffprobe of the received file
}

// fakeSTT speaks POST /v1/audio/transcriptions and /v1/audio/translations like OpenAI:
// multipart in, verbose_json out. It probes the file it receives and answers two segments
// that split the probed duration in half, times in whole milliseconds, each segment's
// text naming its own times ("0.000-8.352") so a test can tell which chunk a merged
// segment came from. A transcription also answers top-level words, as OpenAI does with
// timestamp_granularities[]=word: one per segment, its text without the leading space,
// lasting the first half of its segment. A translation has no words, as at OpenAI. The
// diarizing model answers diarized_json instead, as OpenAI's: the same segments, speakers
// "A" and "B", no language, no words.
type fakeSTT struct {
	t     testing.TB
	media *media.Runner

	arrived chan struct{} // a token per request received

	mu         sync.Mutex
	calls      []sttCall
	status     int  // answer every request with this status, when set
	noSegments bool // answer text only
	hold       bool // keep each request until the client gives up
}

// set changes how the fake answers.
func (f *fakeSTT) set(change func(f *fakeSTT)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func newFakeSTT(t testing.TB) (*fakeSTT, *httptest.Server) {
	testkit.Binary(t, "ffmpeg")
	testkit.Binary(t, "ffprobe")
	f := &fakeSTT{t: t, media: media.New(media.Config{}), arrived: make(chan struct{}, 100)}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// sttAnswer is the verbose_json body.
type sttAnswer struct {
	Task     string       `json:"task"`
	Language string       `json:"language,omitempty"`
	Duration float64      `json:"duration"`
	Text     string       `json:"text"`
	Segments []sttSegment `json:"segments"`
	Words    []sttWord    `json:"words,omitempty"`
}

type sttWord struct {
	Word  string  `json:"word"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

type sttSegment struct {
	ID    int     `json:"id"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
	// Speaker is diarized_json's.
	Speaker string `json:"speaker,omitempty"`
}

// diarizeModel is OpenAI's model that tells speakers apart.
const diarizeModel = "gpt-4o-transcribe-diarize"

var languageNames = map[string]string{"": "english", "en": "english", "de": "german"}

func (f *fakeSTT) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint := strings.TrimPrefix(r.URL.Path, "/v1/audio/")
	if r.Method != http.MethodPost || (endpoint != "transcriptions" && endpoint != "translations") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	c, err := f.receive(r, endpoint)
	if err != nil && r.Context().Err() != nil {
		return // the client gave up (another chunk failed): nothing to check
	}
	if err != nil {
		f.t.Errorf("fake API: %v", err)
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	status, noSegments, hold := f.status, f.noSegments, f.hold
	f.mu.Unlock()
	f.arrived <- struct{}{}
	if hold {
		<-r.Context().Done()
		return
	}
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"error":{"message":"try again later","type":"server_error"}}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(answer(c, noSegments))
}

// receive checks the multipart form and probes the file in it.
func (f *fakeSTT) receive(r *http.Request, endpoint string) (sttCall, error) {
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		return sttCall{}, err
	}
	c := sttCall{
		Endpoint:    endpoint,
		Auth:        r.Header.Get("Authorization"),
		Model:       r.FormValue("model"),
		Format:      r.FormValue("response_format"),
		Granularity: strings.Join(r.MultipartForm.Value["timestamp_granularities[]"], ","),
		Chunking:    r.FormValue("chunking_strategy"),
		Language:    r.FormValue("language"),
		Prompt:      r.FormValue("prompt"),
		Temperature: r.FormValue("temperature"),
	}
	want := "verbose_json"
	if c.Model == diarizeModel {
		want = "diarized_json"
	}
	if c.Model == "" || c.Format != want {
		return c, fmt.Errorf("form %v", r.MultipartForm.Value)
	}
	// The diarizing model takes no granularities and, past 30 s, needs a chunking strategy.
	if c.Model == diarizeModel && (c.Granularity != "" || c.Chunking != "auto" || endpoint != "transcriptions") {
		return c, fmt.Errorf("diarizing form %v", r.MultipartForm.Value)
	}
	// Translations take neither a language nor timestamp granularities.
	if endpoint == "translations" && (c.Granularity != "" || r.MultipartForm.Value["language"] != nil) {
		return c, fmt.Errorf("translation form %v", r.MultipartForm.Value)
	}
	if endpoint == "transcriptions" && c.Model != diarizeModel && c.Granularity != "word,segment" {
		return c, fmt.Errorf("transcription granularities %q", c.Granularity)
	}
	if _, ok := r.MultipartForm.Value["language"]; ok && c.Language == "" {
		return c, errors.New("empty language field")
	}
	file, header, err := r.FormFile("file")
	if err != nil {
		return c, err
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil || len(data) == 0 || header.Filename == "" {
		return c, fmt.Errorf("file %q: %d bytes, %v", header.Filename, len(data), err)
	}
	c.Filename, c.Size, c.Sum = header.Filename, int64(len(data)), sha256.Sum256(data)
	path := filepath.Join(f.t.TempDir(), "received"+filepath.Ext(header.Filename))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return c, err
	}
	if c.Info, err = f.media.Probe(r.Context(), path); err != nil {
		return c, fmt.Errorf("probing %s: %w", header.Filename, err)
	}
	return c, nil
}

// answer builds the verbose_json for what was received.
func answer(c sttCall, noSegments bool) sttAnswer {
	d := c.Info.Duration.Truncate(time.Millisecond)
	half := (d / 2).Truncate(time.Millisecond)
	a := sttAnswer{Task: "transcribe", Language: languageNames[c.Language], Duration: d.Seconds()}
	if c.Endpoint == "translations" {
		a.Task, a.Language = "translate", "english"
	}
	diarized := c.Format == "diarized_json"
	if diarized {
		a.Language = ""
	}
	if noSegments {
		a.Text = " all of it"
		return a
	}
	for i, span := range [][2]time.Duration{{0, half}, {half, d}} {
		text := fmt.Sprintf(" %.3f-%.3f", span[0].Seconds(), span[1].Seconds())
		seg := sttSegment{ID: i, Start: span[0].Seconds(), End: span[1].Seconds(), Text: text}
		if diarized {
			seg.Speaker = string(rune('A' + i))
		}
		a.Segments = append(a.Segments, seg)
		if c.Endpoint == "transcriptions" && !diarized {
			a.Words = append(a.Words, sttWord{Word: strings.TrimSpace(text), Start: span[0].Seconds(), End: wordEnd(span[0], span[1]).Seconds()})
		}
		a.Text += text
	}
	return a
}

// wordEnd is where the fake's word in a segment from start to end ends.
func wordEnd(start, end time.Duration) time.Duration {
	return start + ((end - start) / 2).Truncate(time.Millisecond)
}

// equalSegments compares segments with their words and speakers.
func equalSegments(a, b []providers.Segment) bool {
	return slices.EqualFunc(a, b, func(x, y providers.Segment) bool {
		return x.Start == y.Start && x.End == y.End && x.Text == y.Text && x.Speaker == y.Speaker && slices.Equal(x.Words, y.Words)
	})
}

// withoutWords returns segs with their words left out.
func withoutWords(segs []providers.Segment) []providers.Segment {
	out := slices.Clone(segs)
	for i := range out {
		out[i].Words = nil
	}
	return out
}

func (f *fakeSTT) received() []sttCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// sttSetup is a transcriber against a fake API with its own temp dir.
type sttSetup struct {
	api     *fakeSTT
	tr      *Transcriber
	tempDir string
}

func newSTT(t testing.TB, cfg TranscriberConfig) sttSetup {
	t.Helper()
	api, srv := newFakeSTT(t)
	if cfg.APIKey == "" {
		cfg.APIKey = "sk-test"
	}
	cfg.BaseURL = srv.URL + "/v1"
	cfg.HTTPClient = srv.Client()
	cfg.TempDir = t.TempDir()
	tr := NewTranscriber(cfg)
	if err := tr.Available(); err != nil {
		t.Fatal(err)
	}
	return sttSetup{api: api, tr: tr, tempDir: cfg.TempDir}
}

// transcribe runs one request and checks the progress reports and the temp dir.
func (s sttSetup) transcribe(t *testing.T, req providers.TranscribeRequest) (providers.Transcript, error) {
	t.Helper()
	var mu sync.Mutex
	var reports []int
	req.Progress = func(p int) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, p)
	}
	tr, err := s.tr.Transcribe(context.Background(), req)
	if left, _ := os.ReadDir(s.tempDir); len(left) != 0 {
		t.Errorf("temp files left behind: %v", left)
	}
	if len(reports) == 0 || reports[0] != 0 || !slices.IsSorted(reports) || reports[len(reports)-1] > 100 {
		t.Errorf("progress %v", reports)
	}
	if err == nil && reports[len(reports)-1] != 100 {
		t.Errorf("progress %v does not end at 100", reports)
	}
	return tr, err
}

// transcribeOnce runs a request that must succeed in one API call, and returns the
// transcript and the call.
func (s sttSetup) transcribeOnce(t *testing.T, req providers.TranscribeRequest) (providers.Transcript, sttCall) {
	t.Helper()
	before := len(s.api.received())
	tr, err := s.transcribe(t, req)
	if err != nil {
		t.Fatal(err)
	}
	calls := s.api.received()[before:]
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	return tr, calls[0]
}

// makeFile runs a program that writes a test file named name into a fresh temp dir; args
// builds its arguments from the output path.
func makeFile(t testing.TB, prog, name string, args func(out string) []string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	if msg, err := exec.Command(testkit.Binary(t, prog), args(out)...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", prog, err, msg)
	}
	return out
}

// makeMedia runs ffmpeg with args and the output file named name, and returns its path.
func makeMedia(t *testing.T, name string, args ...string) string {
	return makeFile(t, "ffmpeg", name, func(out string) []string {
		return slices.Concat([]string{"-nostdin", "-loglevel", "error", "-y"}, args, []string{out})
	})
}

// speechWAV is a few seconds of espeak-ng speech as 22 kHz PCM WAV (about 44 kB/s).
func speechWAV(t *testing.T) string {
	return makeFile(t, "espeak-ng", "speech.wav", func(out string) []string {
		return []string{"-w", out, "The quick brown fox jumps over the lazy dog, twice over, and then it rests."}
	})
}

// fromWAV converts a WAV into another file with ffmpeg's output arguments.
func fromWAV(t *testing.T, wav, name string, args ...string) string {
	return makeMedia(t, name, append([]string{"-i", wav}, args...)...)
}

func probe(t *testing.T, path string) media.ProbeInfo {
	t.Helper()
	info, err := media.New(media.Config{}).Probe(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func fileSum(t *testing.T, path string) ([32]byte, int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data), int64(len(data))
}

func within(got, want, tolerance time.Duration) bool {
	return (got - want).Abs() <= tolerance
}

// checkTwoHalves checks a one-request transcript against the fake API's answer.
func checkTwoHalves(t *testing.T, tr providers.Transcript, d time.Duration) {
	t.Helper()
	half := (d / 2).Truncate(time.Millisecond)
	d = d.Truncate(time.Millisecond)
	want := []providers.Segment{
		{Start: 0, End: half, Text: fmt.Sprintf("0.000-%.3f", half.Seconds())},
		{Start: half, End: d, Text: fmt.Sprintf("%.3f-%.3f", half.Seconds(), d.Seconds())},
	}
	if !equalSegments(withoutWords(tr.Segments), want) || tr.Duration != d {
		t.Errorf("transcript %+v\nwant segments %+v over %v", tr, want, d)
	}
	for _, s := range tr.Segments {
		w := []providers.Word{{Start: s.Start, End: wordEnd(s.Start, s.End), Text: " " + s.Text}}
		if !slices.Equal(s.Words, w) {
			t.Errorf("segment %q has words %+v, want %+v", s.Text, s.Words, w)
		}
	}
	if tr.Text != want[0].Text+" "+want[1].Text {
		t.Errorf("text %q", tr.Text)
	}
}

func TestTranscribeSendsAcceptedFilesAsTheyAre(t *testing.T) {
	s := newSTT(t, TranscriberConfig{})
	wav := speechWAV(t)
	tests := []struct {
		name, path, wantName string
	}{
		{"mp3", fromWAV(t, wav, "speech.mp3", "-c:a", "libmp3lame"), "audio.mp3"},
		{"wav", wav, "audio.wav"},
		{"ogg with an upper-case extension", fromWAV(t, wav, "speech.OGG", "-c:a", "libopus", "-f", "ogg"), "audio.ogg"},
		{"flac", fromWAV(t, wav, "speech.flac"), "audio.flac"},
		{"m4a", fromWAV(t, wav, "speech.m4a", "-c:a", "aac"), "audio.m4a"},
		{"mp3 stored without extension", fromWAV(t, wav, "upload-7f3a", "-c:a", "libmp3lame", "-f", "mp3"), "audio.mp3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, c := s.transcribeOnce(t, providers.TranscribeRequest{Path: tt.path})
			sum, size := fileSum(t, tt.path)
			if c.Sum != sum || c.Size != size || c.Filename != tt.wantName {
				t.Errorf("server got %s (%d bytes, same bytes: %v), want %s as it is (%d bytes)", c.Filename, c.Size, c.Sum == sum, tt.wantName, size)
			}
			if c.Auth != "Bearer sk-test" || c.Model != "whisper-1" || c.Language != "" {
				t.Errorf("call %+v", c)
			}
			if tr.Language != "english" {
				t.Errorf("language %q", tr.Language)
			}
			checkTwoHalves(t, tr, c.Info.Duration)
			if !within(tr.Duration, probe(t, tt.path).Duration, 100*time.Millisecond) {
				t.Errorf("duration %v, file lasts %v", tr.Duration, probe(t, tt.path).Duration)
			}
		})
	}
}

func TestTranscribeReencodes(t *testing.T) {
	s := newSTT(t, TranscriberConfig{MaxBytes: 64 << 10})
	wav := speechWAV(t)
	if _, size := fileSum(t, wav); size <= 64<<10 {
		t.Fatalf("test speech is only %d bytes, not above the 64 KiB limit", size)
	}
	tests := []struct {
		name, path string
	}{
		{"wav above the byte limit", wav},
		{"video in a container the API does not take", makeMedia(t, "clip.mkv",
			"-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=4",
			"-i", wav, "-shortest", "-c:v", "libx264", "-c:a", "libvorbis")},
		{"ogg named mp3", fromWAV(t, wav, "liar.mp3", "-c:a", "libopus", "-f", "ogg")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := probe(t, tt.path)
			tr, c := s.transcribeOnce(t, providers.TranscribeRequest{Path: tt.path})
			_, size := fileSum(t, tt.path)
			if c.Filename != "audio.mp3" || c.Info.Container != "mp3" || c.Info.HasVideo ||
				c.Info.Channels != 1 || c.Info.SampleRate != media.SpeechSampleRate {
				t.Errorf("server got %s: %+v, want 16 kHz mono mp3", c.Filename, c.Info)
			}
			if c.Size > 64<<10 || c.Size >= size {
				t.Errorf("server got %d bytes from a %d-byte file, limit %d", c.Size, size, 64<<10)
			}
			checkTwoHalves(t, tr, c.Info.Duration)
			if !within(tr.Duration, in.Duration, 200*time.Millisecond) {
				t.Errorf("duration %v, input lasts %v", tr.Duration, in.Duration)
			}
		})
	}
}

// TestTranscribeChunks checks that a long file is cut into several requests, each within
// the limits, and that the merged transcript puts every segment where its chunk starts.
func TestTranscribeChunks(t *testing.T) {
	// 50 s of tones: re-encoded at 32 kbit/s, about 200 kB.
	long := makeMedia(t, "long.wav", "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=22050:duration=50",
		"-f", "lavfi", "-i", "sine=frequency=700:sample_rate=22050:duration=50", "-filter_complex", "amix=inputs=2")
	longMP3 := fromWAV(t, long, "long.mp3", "-c:a", "libmp3lame", "-b:a", "32k", "-ar", "16000", "-ac", "1")
	tests := []struct {
		name     string
		path     string
		maxBytes int64
		maxChunk time.Duration
	}{
		// 80 kB hold 18 s with the margin: three chunks of 16.667 s.
		{"too big", long, 80_000, time.Hour},
		// Small enough, in an accepted format, but longer than a request may be.
		{"too long", longMP3, MaxUploadBytes, 20 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSTT(t, TranscriberConfig{MaxBytes: tt.maxBytes, MaxChunk: tt.maxChunk, Concurrency: 2})
			in := probe(t, tt.path)
			tr, err := s.transcribe(t, providers.TranscribeRequest{Path: tt.path, Language: "de"})
			if err != nil {
				t.Fatal(err)
			}
			calls := s.api.received()
			if len(calls) != 3 {
				t.Fatalf("%d calls, want 3", len(calls))
			}
			for i, c := range calls {
				if c.Filename != "audio.mp3" || c.Info.Container != "mp3" || c.Size > tt.maxBytes ||
					c.Info.Duration > tt.maxChunk+100*time.Millisecond || c.Language != "de" {
					t.Errorf("call %d: %s, %d bytes, %v, language %q", i, c.Filename, c.Size, c.Info.Duration, c.Language)
				}
			}
			checkMerged(t, tr, 3)
			if tr.Language != "german" {
				t.Errorf("language %q", tr.Language)
			}
			if !within(tr.Duration, in.Duration, 500*time.Millisecond) {
				t.Errorf("duration %v, input lasts %v", tr.Duration, in.Duration)
			}
			if last := tr.Segments[len(tr.Segments)-1].End; last != tr.Duration {
				t.Errorf("last segment ends at %v, transcript lasts %v", last, tr.Duration)
			}
		})
	}
}

// checkMerged checks a transcript merged from n of the fake API's two-segment answers:
// each segment is its chunk's local span (named in its text) shifted by the chunk's
// offset, exactly; offsets are equal steps from 0; segments follow each other without
// overlap (a chunk's last segment is cut where the next chunk starts).
func checkMerged(t *testing.T, tr providers.Transcript, n int) {
	t.Helper()
	if len(tr.Segments) != 2*n {
		t.Fatalf("%d segments, want %d: %+v", len(tr.Segments), 2*n, tr.Segments)
	}
	offsets := make([]time.Duration, n)
	var texts []string
	for k := range n {
		first, second := tr.Segments[2*k], tr.Segments[2*k+1]
		start, half := localSpan(t, first.Text)
		_, end := localSpan(t, second.Text)
		off := first.Start - start
		offsets[k] = off
		next := off + end
		if k+1 < n {
			next = min(next, tr.Segments[2*k+2].Start)
		}
		if start != 0 || first.End != off+half || second.Start != off+half || second.End != next {
			t.Errorf("chunk %d at %v: segments %+v %+v", k, off, first, second)
		}
		// Words are re-based like their segments.
		for _, w := range []struct {
			s          providers.Segment
			start, end time.Duration
		}{{first, off, off + wordEnd(0, half)}, {second, off + half, min(off+wordEnd(half, end), next)}} {
			want := []providers.Word{{Start: w.start, End: w.end, Text: " " + w.s.Text}}
			if !slices.Equal(w.s.Words, want) {
				t.Errorf("chunk %d at %v: segment %q has words %+v, want %+v", k, off, w.s.Text, w.s.Words, want)
			}
		}
		texts = append(texts, first.Text, second.Text)
	}
	step := offsets[1]
	for k, off := range offsets {
		if off != time.Duration(k)*step {
			t.Errorf("chunk offsets %v are not equal steps from 0", offsets)
			break
		}
	}
	for i := 1; i < len(tr.Segments); i++ {
		if tr.Segments[i].Start < tr.Segments[i-1].End || tr.Segments[i].Start < tr.Segments[i-1].Start {
			t.Errorf("segment %d %+v overlaps or precedes %+v", i, tr.Segments[i], tr.Segments[i-1])
		}
	}
	if tr.Text != strings.Join(texts, " ") {
		t.Errorf("text %q", tr.Text)
	}
}

// localSpan reads "1.250-2.500" back.
func localSpan(t *testing.T, text string) (time.Duration, time.Duration) {
	t.Helper()
	a, b, ok := strings.Cut(text, "-")
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("segment text %q", text)
	}
	ms := func(f float64) time.Duration { return time.Duration(math.Round(f*1000)) * time.Millisecond }
	return ms(x), ms(y)
}

func TestTranscribeLanguageAndModel(t *testing.T) {
	s := newSTT(t, TranscriberConfig{Model: "whisper-large-v3"})
	wav := speechWAV(t)
	for _, lang := range []string{"de", "en", ""} {
		t.Run("language "+lang, func(t *testing.T) {
			tr, c := s.transcribeOnce(t, providers.TranscribeRequest{Path: wav, Language: lang})
			if c.Language != lang || c.Model != "whisper-large-v3" || tr.Language != languageNames[lang] {
				t.Errorf("sent language %q model %q, transcript language %q", c.Language, c.Model, tr.Language)
			}
		})
	}
}

// The request's prompt and temperature reach the server (OpenAI's prompt and temperature
// fields); none is sent when they are unset.
func TestTranscribeSendsPromptAndTemperature(t *testing.T) {
	s := newSTT(t, TranscriberConfig{Model: "whisper-large-v3"})
	wav := speechWAV(t)
	_, c := s.transcribeOnce(t, providers.TranscribeRequest{Path: wav, Prompt: "Parla, Kokoro, whisper.cpp", Temperature: 0.2})
	if c.Prompt != "Parla, Kokoro, whisper.cpp" || c.Temperature != "0.20" {
		t.Errorf("sent prompt %q temperature %q", c.Prompt, c.Temperature)
	}
	if _, c := s.transcribeOnce(t, providers.TranscribeRequest{Path: wav}); c.Prompt != "" || c.Temperature != "" {
		t.Errorf("unset: sent prompt %q temperature %q", c.Prompt, c.Temperature)
	}
}

// A translation goes to the translations endpoint without language nor granularities,
// and comes back in English with segments but no words; chunks too.
func TestTranscribeTranslates(t *testing.T) {
	s := newSTT(t, TranscriberConfig{})
	wav := speechWAV(t)
	tr, c := s.transcribeOnce(t, providers.TranscribeRequest{Path: wav, Language: "de", Translate: true})
	if c.Endpoint != "translations" || c.Language != "" || c.Granularity != "" || c.Model != "whisper-1" {
		t.Errorf("call %+v", c)
	}
	if tr.Language != "english" {
		t.Errorf("language %q", tr.Language)
	}
	d := c.Info.Duration.Truncate(time.Millisecond)
	half := (d / 2).Truncate(time.Millisecond)
	want := []providers.Segment{
		{Start: 0, End: half, Text: fmt.Sprintf("0.000-%.3f", half.Seconds())},
		{Start: half, End: d, Text: fmt.Sprintf("%.3f-%.3f", half.Seconds(), d.Seconds())},
	}
	if !equalSegments(tr.Segments, want) {
		t.Errorf("segments %+v, want %+v (no words)", tr.Segments, want)
	}

	long := makeMedia(t, "long.wav", "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=16000:duration=50")
	chunked := newSTT(t, TranscriberConfig{MaxChunk: 20 * time.Second})
	tr, err := chunked.transcribe(t, providers.TranscribeRequest{Path: long, Language: "de", Translate: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := chunked.api.received()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	for i, c := range calls {
		if c.Endpoint != "translations" || c.Language != "" {
			t.Errorf("chunk %d: call %+v", i, c)
		}
	}
	if tr.Language != "english" || len(tr.Segments) != 6 {
		t.Errorf("merged translation %+v", tr)
	}
}

// The diarizing model is asked for diarized_json with chunking_strategy=auto and no
// granularities; its speakers reach the segments (no words: it gives none), chunks too.
func TestTranscribeDiarized(t *testing.T) {
	s := newSTT(t, TranscriberConfig{Model: diarizeModel})
	wav := speechWAV(t)
	tr, c := s.transcribeOnce(t, providers.TranscribeRequest{Path: wav, Language: "en"})
	if c.Format != "diarized_json" || c.Chunking != "auto" || c.Granularity != "" || c.Language != "en" {
		t.Errorf("call %+v", c)
	}
	d := c.Info.Duration.Truncate(time.Millisecond)
	half := (d / 2).Truncate(time.Millisecond)
	want := []providers.Segment{
		{Start: 0, End: half, Text: fmt.Sprintf("0.000-%.3f", half.Seconds()), Speaker: "A"},
		{Start: half, End: d, Text: fmt.Sprintf("%.3f-%.3f", half.Seconds(), d.Seconds()), Speaker: "B"},
	}
	if !equalSegments(tr.Segments, want) || tr.Language != "en" || tr.Duration != d {
		t.Errorf("transcript %+v, want segments %+v in en", tr, want)
	}

	long := makeMedia(t, "long.wav", "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=16000:duration=50")
	chunked := newSTT(t, TranscriberConfig{Model: diarizeModel, MaxChunk: 20 * time.Second})
	tr, err := chunked.transcribe(t, providers.TranscribeRequest{Path: long})
	if err != nil {
		t.Fatal(err)
	}
	if s.tr.Translates() == nil || NewTranscriber(TranscriberConfig{APIKey: "k"}).Translates() != nil {
		t.Error("the diarizing model is taken to translate, or whisper-1 is not")
	}
	var speakers []string
	for _, s := range tr.Segments {
		speakers = append(speakers, s.Speaker)
	}
	if len(chunked.api.received()) != 3 || strings.Join(speakers, "") != "ABABAB" {
		t.Errorf("%d calls, speakers %v", len(chunked.api.received()), speakers)
	}
}

func TestTranscribeAnswerWithoutSegments(t *testing.T) {
	s := newSTT(t, TranscriberConfig{})
	s.api.set(func(f *fakeSTT) { f.noSegments = true })
	wav := speechWAV(t)
	tr, c := s.transcribeOnce(t, providers.TranscribeRequest{Path: wav})
	d := c.Info.Duration.Truncate(time.Millisecond)
	want := []providers.Segment{{Start: 0, End: d, Text: "all of it"}}
	if !equalSegments(tr.Segments, want) || tr.Text != "all of it" || tr.Duration != d {
		t.Errorf("transcript %+v, want %+v", tr, want)
	}
}

// TestTranscribeServerErrors: a failed call says the status; a refusal (401 here) is
// providers.ErrRefused, refunded at once, while 429 and 5xx are not, and are retried.
func TestTranscribeServerErrors(t *testing.T) {
	wav := speechWAV(t)
	for _, status := range []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d chunked=%v", status, chunked), func(t *testing.T) {
				cfg := TranscriberConfig{}
				if chunked {
					cfg.MaxChunk = 2 * time.Second
				}
				s := newSTT(t, cfg)
				s.api.set(func(f *fakeSTT) { f.status = status })
				_, err := s.transcribe(t, providers.TranscribeRequest{Path: wav})
				if err == nil {
					t.Fatal("no error")
				}
				if HTTPStatus(err) != status || !strings.Contains(err.Error(), strconv.Itoa(status)) {
					t.Errorf("error %q, status %d, want %d", err, HTTPStatus(err), status)
				}
				if chunked && !strings.Contains(err.Error(), "chunk ") {
					t.Errorf("error %q does not name the chunk", err)
				}
				if refused := status == http.StatusUnauthorized; errors.Is(err, providers.ErrRefused) != refused {
					t.Errorf("%d: ErrRefused is %v, want %v (a refusal is final, the others are retried)", status, !refused, refused)
				}
			})
		}
	}
}

func TestTranscribeHonoursCancel(t *testing.T) {
	s := newSTT(t, TranscriberConfig{MaxChunk: 2 * time.Second})
	s.api.set(func(f *fakeSTT) { f.hold = true })
	wav := speechWAV(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancelledAt := make(chan time.Time, 1)
	go func() {
		<-s.api.arrived
		cancelledAt <- time.Now()
		cancel()
	}()
	_, err := s.tr.Transcribe(ctx, providers.TranscribeRequest{Path: wav})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	// The fake holds the request for ever and the client has no timeout: returning at all
	// proves the cancel; 20 s from the cancel (not from the start: preparing the chunks
	// takes seconds on a loaded runner) that it was prompt.
	if d := time.Since(<-cancelledAt); d > 20*time.Second {
		t.Errorf("took %v to give up", d)
	}
	if left, _ := os.ReadDir(s.tempDir); len(left) != 0 {
		t.Errorf("temp files left behind: %v", left)
	}
}

func TestTranscriberAvailable(t *testing.T) {
	tr := NewTranscriber(TranscriberConfig{})
	err := tr.Available()
	if !errors.Is(err, providers.ErrUnavailable) || !strings.Contains(err.Error(), "OPENAI_API_KEY not set") {
		t.Errorf("Available() = %v, want unavailable for want of a key", err)
	}
	if _, err := tr.Transcribe(context.Background(), providers.TranscribeRequest{Path: "x.mp3"}); !errors.Is(err, providers.ErrUnavailable) {
		t.Errorf("Transcribe without key: %v", err)
	}
	noTools := NewTranscriber(TranscriberConfig{APIKey: "k", Media: media.New(media.Config{FFprobe: "/nonexistent/ffprobe"})})
	if err := noTools.Available(); !errors.Is(err, providers.ErrUnavailable) {
		t.Errorf("Available() without ffprobe = %v", err)
	}
}

func TestTranscribeMissingFile(t *testing.T) {
	s := newSTT(t, TranscriberConfig{})
	_, err := s.transcribe(t, providers.TranscribeRequest{Path: filepath.Join(t.TempDir(), "gone.mp3")})
	if !errors.Is(err, os.ErrNotExist) || len(s.api.received()) != 0 {
		t.Errorf("error %v, %d calls", err, len(s.api.received()))
	}
}

func TestAcceptedAs(t *testing.T) {
	mp4 := "mov,mp4,m4a,3gp,3g2,mj2"
	tests := []struct {
		path, container, codec string
		want                   string
		ok                     bool
	}{
		{"a.mp3", "mp3", "", "mp3", true},
		{"a.MPGA", "mp3", "", "mpga", true},
		{"a.mpeg", "mpeg", "", "mpeg", true},
		{"a.m4a", mp4, "", "m4a", true},
		{"a.mp4", mp4, "", "mp4", true},
		{"a.wav", "wav", "", "wav", true},
		{"a.webm", "matroska,webm", "opus", "webm", true},
		{"a.ogg", "ogg", "opus", "ogg", true},
		{"a.flac", "flac", "", "flac", true},
		{"upload", "ogg", "opus", "ogg", true},
		{"upload", mp4, "", "m4a", true},
		{"a.mkv", "matroska,webm", "opus", "", false},
		{"a.mov", mp4, "", "", false},
		{"a.mp3", "ogg", "opus", "", false},
		{"a.wav", "mp3", "", "", false},
		{"a.aac", "aac", "", "", false},
		{"upload", "aac", "", "", false},
		{"a.opus", "ogg", "opus", "", false},
		{"upload", "matroska,webm", "aac", "", false}, // Matroska with AAC is no WebM
		{"a.webm", "matroska,webm", "aac", "", false},
		{"upload", "ogg", "speex", "", false},
	}
	for _, tt := range tests {
		got, ok := acceptedAs("/data/"+tt.path, media.ProbeInfo{Container: tt.container, Codec: tt.codec})
		if got != tt.want || ok != tt.ok {
			t.Errorf("acceptedAs(%s, %s) = %q, %v, want %q, %v", tt.path, tt.container, got, ok, tt.want, tt.ok)
		}
	}
}

func TestToTranscript(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name     string
		body     string
		hint     string
		fallback time.Duration
		want     providers.Transcript
	}{
		{name: "segments", body: `{"language":"english","duration":16.704,"text":" Hello there. General Kenobi.",
			"segments":[{"start":0,"end":1.2,"text":" Hello there."},{"start":1.2,"end":16.704,"text":" General Kenobi."}]}`,
			want: providers.Transcript{Language: "english", Duration: 16704 * time.Millisecond, Text: "Hello there. General Kenobi.",
				Segments: []providers.Segment{seg(0, 1200*time.Millisecond, "Hello there."), seg(1200*time.Millisecond, 16704*time.Millisecond, "General Kenobi.")}}},
		{name: "no segments", body: `{"language":"german","duration":3.5,"text":" Hallo."}`,
			want: providers.Transcript{Language: "german", Duration: 3500 * time.Millisecond, Text: "Hallo.",
				Segments: []providers.Segment{seg(0, 3500*time.Millisecond, "Hallo.")}}},
		{name: "no language, no duration", body: `{"text":"Hallo."}`, hint: "de", fallback: 2 * s,
			want: providers.Transcript{Language: "de", Duration: 2 * s, Text: "Hallo.", Segments: []providers.Segment{seg(0, 2*s, "Hallo.")}}},
		{name: "silence", body: `{"language":"english","duration":9,"text":"","segments":[]}`,
			want: providers.Transcript{Language: "english", Duration: 9 * s}},
		{name: "words go to segments by time", body: `{"language":"english","duration":4,"text":" Hello there. General Kenobi.",
			"segments":[{"start":0,"end":1.2,"text":" Hello there."},{"start":1.2,"end":4,"text":" General Kenobi."}],
			"words":[{"word":"Hello","start":0.1,"end":0.5},{"word":"there","start":0.6,"end":1.3},
				{"word":"General","start":1.4,"end":2},{"word":"Kenobi","start":2.1,"end":3.2}]}`,
			want: providers.Transcript{Language: "english", Duration: 4 * s, Text: "Hello there. General Kenobi.",
				Segments: []providers.Segment{
					{Start: 0, End: 1200 * time.Millisecond, Text: "Hello there.", Words: []providers.Word{
						{Start: 100 * time.Millisecond, End: 500 * time.Millisecond, Text: " Hello"},
						{Start: 600 * time.Millisecond, End: 1300 * time.Millisecond, Text: " there"}}},
					{Start: 1200 * time.Millisecond, End: 4 * s, Text: "General Kenobi.", Words: []providers.Word{
						{Start: 1400 * time.Millisecond, End: 2 * s, Text: " General"},
						{Start: 2100 * time.Millisecond, End: 3200 * time.Millisecond, Text: " Kenobi"}}}}}},
		{name: "japanese words without spaces", body: `{"language":"japanese","duration":2,"text":"東京です。",
			"segments":[{"start":0,"end":2,"text":"東京です。"}],
			"words":[{"word":"東京","start":0,"end":0.8},{"word":"です","start":0.8,"end":1.5}]}`,
			want: providers.Transcript{Language: "japanese", Duration: 2 * s, Text: "東京です。",
				Segments: []providers.Segment{{Start: 0, End: 2 * s, Text: "東京です。", Words: []providers.Word{
					{Start: 0, End: 800 * time.Millisecond, Text: "東京"},
					{Start: 800 * time.Millisecond, End: 1500 * time.Millisecond, Text: "です"}}}}}},
		{name: "words without segments join the whole", body: `{"duration":2,"text":"Hi you","words":[{"word":"Hi","start":0,"end":0.4},{"word":"you","start":0.5,"end":0.9}]}`,
			want: providers.Transcript{Duration: 2 * s, Text: "Hi you", Segments: []providers.Segment{{Start: 0, End: 2 * s, Text: "Hi you",
				Words: []providers.Word{{Start: 0, End: 400 * time.Millisecond, Text: " Hi"}, {Start: 500 * time.Millisecond, End: 900 * time.Millisecond, Text: " you"}}}}}},
		{name: "a segment whisper calls silence is dropped with its words", body: `{"language":"english","duration":30,"text":" Hello. Thank you.",
			"segments":[{"start":0,"end":2,"text":" Hello.","no_speech_prob":0.1,"avg_logprob":-0.3},
				{"start":2,"end":30,"text":" Thank you.","no_speech_prob":0.9,"avg_logprob":-1.2}],
			"words":[{"word":"Hello","start":0.2,"end":0.8},{"word":"Thank","start":10,"end":20},{"word":"you","start":20,"end":29}]}`,
			want: providers.Transcript{Language: "english", Duration: 30 * s, Text: "Hello.",
				Segments: []providers.Segment{{Start: 0, End: 2 * s, Text: "Hello.", Words: []providers.Word{
					{Start: 200 * time.Millisecond, End: 800 * time.Millisecond, Text: " Hello"}}}}}},
		{name: "probably silent but confident: kept", body: `{"duration":3,"text":" Hm.",
			"segments":[{"start":0,"end":3,"text":" Hm.","no_speech_prob":0.9,"avg_logprob":-0.5}]}`,
			want: providers.Transcript{Duration: 3 * s, Text: "Hm.", Segments: []providers.Segment{seg(0, 3*s, "Hm.")}}},
		{name: "negative nonsense", body: `{"duration":-1,"text":"x"}`, fallback: s,
			want: providers.Transcript{Duration: s, Text: "x", Segments: []providers.Segment{seg(0, s, "x")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp goopenai.AudioResponse
			if err := json.Unmarshal([]byte(tt.body), &resp); err != nil {
				t.Fatal(err)
			}
			got := toTranscript(resp, tt.hint, tt.fallback)
			if got.Language != tt.want.Language || got.Duration != tt.want.Duration || got.Text != tt.want.Text ||
				!equalSegments(got.Segments, tt.want.Segments) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func seg(start, end time.Duration, text string) providers.Segment {
	return providers.Segment{Start: start, End: end, Text: text}
}

func TestMergeTranscripts(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name  string
		parts []TranscriptPart
		want  providers.Transcript
	}{
		{name: "nothing", want: providers.Transcript{}},
		{name: "one part", parts: []TranscriptPart{{0, providers.Transcript{Language: "english", Duration: 5 * s, Text: "a b",
			Segments: []providers.Segment{seg(0, 2*s, "a"), seg(2*s, 5*s, "b")}}}},
			want: providers.Transcript{Language: "english", Duration: 5 * s, Text: "a b",
				Segments: []providers.Segment{seg(0, 2*s, "a"), seg(2*s, 5*s, "b")}}},
		{name: "shifted, clamped at the next chunk, silence skipped", parts: []TranscriptPart{
			{0, providers.Transcript{Language: "english", Duration: 10100 * time.Millisecond, Text: " a b ",
				Segments: []providers.Segment{seg(0, 4*s, "a"), seg(4*s, 10100*time.Millisecond, "b")}}},
			{10 * s, providers.Transcript{Language: "german", Duration: 10 * s}},
			{20 * s, providers.Transcript{Duration: 5 * s, Text: "c",
				Segments: []providers.Segment{seg(1*s, 7*s, "c")}}},
		}, want: providers.Transcript{Language: "english", Duration: 25 * s, Text: "a b c",
			Segments: []providers.Segment{seg(0, 4*s, "a"), seg(4*s, 10*s, "b"), seg(21*s, 25*s, "c")}}},
		{name: "words shifted and clamped like segments", parts: []TranscriptPart{
			{0, providers.Transcript{Duration: 10 * s, Text: "a", Segments: []providers.Segment{{Start: 0, End: 11 * s, Text: "a",
				Words: []providers.Word{{Start: 9 * s, End: 11 * s, Text: " a"}}}}}},
			{10 * s, providers.Transcript{Duration: 5 * s, Text: "b", Segments: []providers.Segment{{Start: 1 * s, End: 2 * s, Text: "b",
				Words: []providers.Word{{Start: 1 * s, End: 1500 * time.Millisecond, Text: " b"}}}}}},
		}, want: providers.Transcript{Duration: 15 * s, Text: "a b", Segments: []providers.Segment{
			{Start: 0, End: 10 * s, Text: "a", Words: []providers.Word{{Start: 9 * s, End: 10 * s, Text: " a"}}},
			{Start: 11 * s, End: 12 * s, Text: "b", Words: []providers.Word{{Start: 11 * s, End: 11500 * time.Millisecond, Text: " b"}}}}}},
		{name: "unknown chunk duration", parts: []TranscriptPart{
			{0, providers.Transcript{Text: "a", Segments: []providers.Segment{seg(0, 3*s, "a")}}},
			{4 * s, providers.Transcript{Text: "b", Segments: []providers.Segment{seg(1*s, 2*s, "b")}}},
		}, want: providers.Transcript{Duration: 6 * s, Text: "a b",
			Segments: []providers.Segment{seg(0, 3*s, "a"), seg(5*s, 6*s, "b")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MergeTranscripts(tt.parts)
			if got.Language != tt.want.Language || got.Duration != tt.want.Duration || got.Text != tt.want.Text ||
				!equalSegments(got.Segments, tt.want.Segments) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestForEachStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	var mu sync.Mutex
	var ran []int
	err := forEach(context.Background(), 50, 3, func(ctx context.Context, i int) error {
		mu.Lock()
		ran = append(ran, i)
		mu.Unlock()
		switch {
		case i < 4:
			return nil
		case i == 4:
			return boom
		}
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
	if len(ran) > 8 {
		t.Errorf("ran %d of 50 after the error", len(ran))
	}
}
