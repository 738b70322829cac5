package orders

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"parla/media"
	"parla/media/links"
	"parla/providers"
)

// PreviewClip stands in for media.Runner's: the clip holds the first length of the
// file's "audio", written as lengthInFile reads it.
func (l lengthInFile) PreviewClip(_ context.Context, input string, _ bool, length time.Duration, dst string) (media.Measurement, error) {
	m, err := l.measure(input)
	if err != nil {
		return m, err
	}
	return writeClip(dst, min(m.Length, length), m.Speech == 0)
}

func (lengthInFile) VisitorSlot(context.Context) (func(), error) { return func() {}, nil }

// PreviewClip is FetchAudio's first length.
func (l *scriptedLinks) PreviewClip(_ context.Context, info links.LinkInfo, dst string, length time.Duration) (media.Measurement, error) {
	d, err := l.get(info.URL)
	if err != nil {
		return media.Measurement{}, err
	}
	l.mu.Lock()
	silent := l.silent[info.URL] != ""
	l.mu.Unlock()
	return writeClip(dst, min(d, length), silent)
}

// writeClip writes a clip of length as lengthInFile reads it, and its measure.
func writeClip(dst string, length time.Duration, silent bool) (media.Measurement, error) {
	content := length.String()
	if silent {
		content += " silent"
	}
	if err := os.WriteFile(dst, []byte(content), 0o600); err != nil {
		return media.Measurement{}, err
	}
	return lengthInFile{}.measure(dst)
}

// previewFixture is a book whose previews hear 30 s, with budget perHour.
func previewFixture(t *testing.T, perHour time.Duration) *fixture {
	return newFixture(t, func(c *Config) {
		c.Preview = PreviewConfig{Length: 30 * time.Second, PerHour: perHour, Engine: "scripted"}
	})
}

// previewOf asks until the preview is answered (or fails), for at most a minute.
func previewOf(t *testing.T, f *fixture, ask PreviewAsk) (TranscriptPreview, error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		p, err := f.book.Previews.Preview(context.Background(), ask, 100*time.Millisecond)
		if !errors.Is(err, ErrPreviewPending) || time.Now().After(deadline) {
			return p, err
		}
	}
}

func (s *scriptedTranscriber) calls() []providers.TranscribeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]providers.TranscribeRequest(nil), s.requests...)
}

func TestAPreviewHearsTheFirstSecondsOnceAndAgainForAnotherLanguage(t *testing.T) {
	f := previewFixture(t, time.Hour)
	u, _, err := f.upload(t, "180s")
	if err != nil {
		t.Fatal(err)
	}
	ask := PreviewAsk{Service: STT, Upload: u.ID, Client: "198.51.100.1"}
	p, err := previewOf(t, f, ask)
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != "One. Two." || p.Language != "en" || p.Length != 30*time.Second || !p.Speech {
		t.Errorf("preview = %+v, want the engine's text, en, 30 s, speech", p)
	}
	calls := f.stt.calls()
	if len(calls) != 1 || calls[0].Duration != 30*time.Second {
		t.Fatalf("engine calls = %+v, want one of 30 s", calls)
	}
	if data, _ := os.ReadFile(calls[0].Path); len(data) != 0 {
		t.Errorf("the clip %s was kept after the preview", calls[0].Path)
	}
	// The same question, from another request: its first answer, no engine call.
	if again, err := previewOf(t, f, ask); err != nil || again != p || len(f.stt.calls()) != 1 {
		t.Errorf("asked again: %+v, %v, %d engine calls; want the first answer and still 1", again, err, len(f.stt.calls()))
	}
	// Another language: heard again, in it.
	ask.Language = "DE"
	if _, err := previewOf(t, f, ask); err != nil {
		t.Fatal(err)
	}
	if calls := f.stt.calls(); len(calls) != 2 || calls[1].Language != "de" {
		t.Errorf("engine calls = %+v, want a second one in de", calls)
	}
	ask.Language = "xx"
	if _, err := previewOf(t, f, ask); !isCode(err, "invalid_language") {
		t.Errorf("language xx: %v, want invalid_language", err)
	}
}

// isCode reports an InputError of code.
func isCode(err error, code string) bool {
	var ie *InputError
	return errors.As(err, &ie) && ie.Code == code
}

func TestAPreviewOfSilenceSaysSoWithoutTheEngine(t *testing.T) {
	f := previewFixture(t, time.Hour)
	f.links.set("https://video.example/quiet.mp4", 20*time.Minute)
	f.links.silence("https://video.example/quiet.mp4", "unmeasured")
	p, err := previewOf(t, f, PreviewAsk{Service: VTT, Link: "https://video.example/quiet.mp4", Client: "198.51.100.1"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Speech || p.Text != "" || p.Length != 30*time.Second {
		t.Errorf("preview of silence = %+v, want no speech over 30 s", p)
	}
	if n := len(f.stt.calls()); n != 0 {
		t.Errorf("the engine was asked %d times about silence", n)
	}
}

func TestAPreviewIsRefusedAsItsSourceIs(t *testing.T) {
	f := previewFixture(t, time.Hour)
	if _, err := previewOf(t, f, PreviewAsk{Service: STT, Upload: "nope", Client: "198.51.100.1"}); !errors.Is(err, ErrUploadNotFound) {
		t.Errorf("unknown upload: %v, want ErrUploadNotFound", err)
	}
	if _, err := previewOf(t, f, PreviewAsk{Service: VTT, Link: "https://video.example/gone.mp4", Client: "198.51.100.1"}); !errors.Is(err, links.ErrVideoUnavailable) {
		t.Errorf("a link gone: %v, want ErrVideoUnavailable", err)
	}
	if _, err := previewOf(t, f, PreviewAsk{Service: VTT, Link: " ", Client: "198.51.100.1"}); !isCode(err, "empty_link") {
		t.Errorf("no link: %v, want empty_link", err)
	}
	off := newFixture(t, nil) // no PreviewConfig: off
	if _, err := previewOf(t, off, PreviewAsk{Service: STT, Upload: "x"}); !errors.Is(err, ErrPreviewsOff) {
		t.Errorf("previews off: %v, want ErrPreviewsOff", err)
	}
	if n := len(f.stt.calls()); n != 0 {
		t.Errorf("the engine was asked %d times", n)
	}
}

func TestAnEngineFailureIsToldForAWhileAndGivesTheSecondsBack(t *testing.T) {
	f := previewFixture(t, 40*time.Second)
	u, _, _ := f.upload(t, "180s")
	ask := PreviewAsk{Service: STT, Upload: u.ID, Client: "198.51.100.1"}
	f.stt.fail.Store(true)
	if _, err := previewOf(t, f, ask); !errors.Is(err, ErrPreviewFailed) {
		t.Fatalf("engine down: %v, want ErrPreviewFailed", err)
	}
	f.stt.fail.Store(false)
	// Told again to whoever asks within previewErrorKeep, without asking the engine.
	if _, err := previewOf(t, f, ask); !errors.Is(err, ErrPreviewFailed) || len(f.stt.calls()) != 1 {
		t.Errorf("asked again at once: %v, %d engine calls; want the failure and 1", err, len(f.stt.calls()))
	}
	f.clock.Advance(previewErrorKeep + time.Second)
	// Then made again; the failed one's 30 s were given back, or 30 + 30 > 40.
	if p, err := previewOf(t, f, ask); err != nil || !p.Speech {
		t.Errorf("after the engine is back: %+v, %v", p, err)
	}
}

func TestTheBudgetCountsSecondsHeardPerClient(t *testing.T) {
	f := previewFixture(t, 70*time.Second)
	var ids []string
	for _, length := range []string{"180s", "181s", "10s", "182s"} {
		u, _, err := f.upload(t, length)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	ask := func(id, client string) error {
		_, err := previewOf(t, f, PreviewAsk{Service: STT, Upload: id, Client: client})
		return err
	}
	// 30 + 30 + 10 = 70 s: spent exactly.
	for _, id := range ids[:3] {
		if err := ask(id, "198.51.100.1"); err != nil {
			t.Fatal(err)
		}
	}
	var spent *PreviewBudgetError
	if err := ask(ids[3], "198.51.100.1"); !errors.As(err, &spent) || spent.Wait <= 0 || spent.Wait > time.Hour {
		t.Fatalf("past the budget: %v, want a PreviewBudgetError with a wait within the hour", err)
	}
	if err := ask(ids[0], "198.51.100.1"); err != nil {
		t.Errorf("an answer made already costs nothing: %v", err)
	}
	if err := ask(ids[3], "203.0.113.9"); err != nil {
		t.Errorf("another client: %v", err)
	}
	f.clock.Advance(spent.Wait)
	if err := ask(ids[3], "198.51.100.1"); err != nil {
		t.Errorf("after the wait: %v", err)
	}
}

func TestBudgetWait(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	at := func(ago time.Duration, length time.Duration) previewCharge {
		return previewCharge{at: now.Add(-ago), length: length}
	}
	cases := []struct {
		name   string
		recent []previewCharge
		length time.Duration
		wait   time.Duration
		ok     bool
	}{
		{"empty", nil, 30 * time.Second, 0, true},
		{"longer than the budget fits an empty one", nil, 2 * time.Hour, 0, true},
		{"fits exactly", []previewCharge{at(time.Minute, 270*time.Second)}, 30 * time.Second, 0, true},
		{"the oldest must leave", []previewCharge{at(50*time.Minute, 150*time.Second), at(10*time.Minute, 150*time.Second)}, 30 * time.Second, 10 * time.Minute, false},
		{"both must leave", []previewCharge{at(50*time.Minute, 150*time.Second), at(10*time.Minute, 150*time.Second)}, 200 * time.Second, 50 * time.Minute, false},
	}
	for _, c := range cases {
		wait, ok := budgetWait(c.recent, c.length, 5*time.Minute, now)
		if wait != c.wait || ok != c.ok {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, wait, ok, c.wait, c.ok)
		}
	}
}

// gatedTranscriber holds each call until the test lets it go, and says when one starts.
type gatedTranscriber struct {
	scriptedTranscriber
	started chan providers.TranscribeRequest
	release chan struct{}
}

func (g *gatedTranscriber) Transcribe(ctx context.Context, req providers.TranscribeRequest) (providers.Transcript, error) {
	g.started <- req
	select {
	case <-g.release:
	case <-ctx.Done():
		return providers.Transcript{}, ctx.Err()
	}
	return g.scriptedTranscriber.Transcribe(ctx, req)
}

// ended is the paid call's end, within a generous bound.
func ended(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the paid call did not end within 30 s")
	}
	return nil
}

// let lets one call go on, within a generous bound.
func let(t *testing.T, release chan struct{}) {
	t.Helper()
	select {
	case release <- struct{}{}:
	case <-time.After(30 * time.Second):
		t.Fatal("no call waited to be let go within 30 s")
	}
}

// started is the next call to start, within a generous bound.
func started(t *testing.T, calls chan providers.TranscribeRequest) providers.TranscribeRequest {
	t.Helper()
	select {
	case req := <-calls:
		return req
	case <-time.After(30 * time.Second):
		t.Fatal("no engine call started within 30 s")
	}
	return providers.TranscribeRequest{}
}

func TestAPreviewWaitsForPaidWorkAndPaidWorkStopsAPreview(t *testing.T) {
	g := &gatedTranscriber{started: make(chan providers.TranscribeRequest, 8), release: make(chan struct{})}
	turns := NewEngineTurns()
	f := newFixtureDeps(t, func(c *Config) {
		c.Preview = PreviewConfig{Length: 30 * time.Second, PerHour: time.Hour, Engine: "gated"}
	}, func(d *Deps) { d.Transcriber, d.Turns = g, turns })
	u, _, _ := f.upload(t, "180s")
	ask := PreviewAsk{Service: STT, Upload: u.ID, Client: "198.51.100.1"}
	paid := turns.Paid(g)
	paidPath := filepath.Join(t.TempDir(), "paid")
	os.WriteFile(paidPath, []byte("1h"), 0o600)

	// Paid work running: the preview waits, the engine hears nothing of it.
	paidDone := make(chan error, 1)
	go func() {
		_, err := paid.Transcribe(context.Background(), providers.TranscribeRequest{Path: paidPath, Duration: time.Hour})
		paidDone <- err
	}()
	if req := started(t, g.started); req.Path != paidPath {
		t.Fatalf("first call %q, want the paid one", req.Path)
	}
	if _, err := f.book.Previews.Preview(context.Background(), ask, 300*time.Millisecond); !errors.Is(err, ErrPreviewPending) {
		t.Fatalf("preview beside paid work: %v, want pending", err)
	}
	select {
	case req := <-g.started:
		t.Fatalf("the preview reached the engine (%s) while paid work ran", req.Path)
	case <-time.After(300 * time.Millisecond):
	}
	let(t, g.release) // the paid call ends
	if err := ended(t, paidDone); err != nil {
		t.Fatal(err)
	}
	first := started(t, g.started) // now the preview runs
	if first.Path == paidPath {
		t.Fatal("a second paid call?")
	}
	// Paid work starts while the preview runs: the preview is stopped, and runs again after.
	go func() {
		_, err := paid.Transcribe(context.Background(), providers.TranscribeRequest{Path: paidPath, Duration: time.Hour})
		paidDone <- err
	}()
	if req := started(t, g.started); req.Path != paidPath {
		t.Fatalf("after the preview, %q started; want the paid call", req.Path)
	}
	let(t, g.release)
	if err := ended(t, paidDone); err != nil {
		t.Fatal(err)
	}
	again := started(t, g.started)
	if again.Path == paidPath || again.Duration != 30*time.Second {
		t.Fatalf("the preview's second run: %+v", again)
	}
	close(g.release)
	p, err := previewOf(t, f, ask)
	if err != nil || !p.Speech {
		t.Fatalf("preview after paid work: %+v, %v", p, err)
	}
}

func TestOnePreviewAtATime(t *testing.T) {
	turns := NewEngineTurns()
	ctx := context.Background()
	_, done, err := turns.previewTurn(ctx, ctx)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	second := false
	go func() {
		_, d2, err := turns.previewTurn(ctx, ctx)
		if err == nil {
			mu.Lock()
			second = true
			mu.Unlock()
			d2()
		}
	}()
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	if second {
		t.Error("a second preview ran beside the first")
	}
	mu.Unlock()
	done()
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, d3, err := turns.previewTurn(short, ctx); err != nil {
		t.Errorf("the slot was not given back: %v", err)
	} else {
		d3()
	}
}

func TestStopEndsThePreviewsBeingMade(t *testing.T) {
	turns := NewEngineTurns()
	f := newFixtureDeps(t, func(c *Config) {
		c.Preview = PreviewConfig{Length: 30 * time.Second, PerHour: time.Hour, Engine: "scripted"}
	}, func(d *Deps) { d.Turns = turns })
	u, _, _ := f.upload(t, "180s")
	paidDone := turns.paidStarted() // paid work runs: the preview waits
	defer paidDone()
	ask := PreviewAsk{Service: STT, Upload: u.ID, Client: "198.51.100.1"}
	if _, err := f.book.Previews.Preview(context.Background(), ask, 100*time.Millisecond); !errors.Is(err, ErrPreviewPending) {
		t.Fatalf("preview beside paid work: %v", err)
	}
	stopped := make(chan struct{})
	go func() { f.book.Previews.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("stop still waits for a preview after 30 s")
	}
	if _, err := f.book.Previews.Preview(context.Background(), ask, time.Second); !errors.Is(err, ErrPreviewsOff) {
		t.Errorf("the preview stopped: %v, want ErrPreviewsOff (the page hides it)", err)
	}
	if _, err := f.book.Previews.Preview(context.Background(), ask, time.Second); !errors.Is(err, ErrPreviewsOff) {
		t.Errorf("a preview after stop: %v, want ErrPreviewsOff", err)
	}
	if left := files(t, f.tmp); len(left) != 0 {
		t.Errorf("scratch files left: %v", left)
	}
}

func TestALinksPreviewIsCountedWholeAndFoundWithoutAnalysingAgain(t *testing.T) {
	f := previewFixture(t, 50*time.Second)
	f.links.set("https://video.example/short.mp4", 10*time.Second) // or so its header says
	ask := PreviewAsk{Service: VTT, Link: "https://video.example/short.mp4", Client: "198.51.100.1"}
	if _, err := previewOf(t, f, ask); err != nil {
		t.Fatal(err)
	}
	analyses := f.links.analyses.Load()
	for range 3 {
		if _, err := previewOf(t, f, PreviewAsk{Service: VTT, Link: " https://video.example/short.mp4 ", Client: "198.51.100.1"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.links.analyses.Load(); n != analyses {
		t.Errorf("asking again analysed the link %d more times", n-analyses)
	}
	// A link's length is its header's word: its preview counts 30 s, so 30 + 30 > 50.
	ask.Language = "de"
	var spent *PreviewBudgetError
	if _, err := previewOf(t, f, ask); !errors.As(err, &spent) {
		t.Errorf("a second preview of a 10 s link within a 50 s budget: %v, want refused", err)
	}
}

func TestAPreviewsWorkIsNotCutByItsWait(t *testing.T) {
	turns := NewEngineTurns()
	wait, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	turn, done, err := turns.previewTurn(wait, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	<-wait.Done()
	if err := turn.Err(); err != nil {
		t.Errorf("the turn ended with its wait: %v", err)
	}
	done()
	done() // twice: the slot is given back once
	if _, d2, err := turns.previewTurn(context.Background(), context.Background()); err != nil {
		t.Fatal(err)
	} else {
		d2()
	}
}

func TestAFullBudgetBookForgetsAClientWithNothingLeft(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	b := &previewBudget{perHour: time.Hour, now: func() time.Time { return now }}
	if err := b.take("victim", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	b.giveBack("victim", 30*time.Second) // a preview that failed on our side
	for i := range previewClients {
		b.charges[fmt.Sprint(i)] = []previewCharge{{at: now, length: time.Second}}
	}
	if err := b.take("newcomer", 30*time.Second); err != nil {
		t.Errorf("a new client past the bound: %v", err)
	}
	if len(b.charges) > previewClients {
		t.Errorf("%d clients remembered, bound %d", len(b.charges), previewClients)
	}
}
