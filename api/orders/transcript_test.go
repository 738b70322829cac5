package orders

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/media"
	"parla/media/links"
	"parla/providers"
)

// lengthInFile stands in for ffprobe: a file's "duration" is the number of seconds written
// in it ("12s"), all of it speech, or none when "silent" follows ("12s silent"); anything
// else is not audio. media.Runner's checks are tested on real media in their own package
// and end to end.
type lengthInFile struct{}

// measure reads the file's length and speech, as both checks do first.
func (lengthInFile) measure(path string) (media.Measurement, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return media.Measurement{}, err
	}
	length, silent := strings.CutSuffix(strings.TrimSpace(string(data)), " silent")
	d, err := time.ParseDuration(length)
	if err != nil {
		return media.Measurement{}, fmt.Errorf("%w: %q", media.ErrUnreadable, data)
	}
	if silent {
		return media.Measurement{Length: d, Silences: []media.Span{{Start: 0, End: d}}}, nil
	}
	return media.Measurement{Length: d, Speech: d}, nil
}

// CheckPaid is measure, refusing what lasts longer than the paid length and its margin.
func (l lengthInFile) CheckPaid(ctx context.Context, path string, paid time.Duration) (media.Measurement, error) {
	m, err := l.measure(path)
	if err == nil && m.Length > media.EngineLimit(paid) {
		return media.Measurement{}, media.ErrTooLong
	}
	return m, err
}

// CheckUpload is measure, refusing "dense" as a decode bomb; the longest taken is the
// Desk's to enforce.
func (l lengthInFile) CheckUpload(ctx context.Context, path string, _ time.Duration) (media.Measurement, error) {
	if data, _ := os.ReadFile(path); string(data) == "dense" {
		return media.Measurement{}, media.ErrTooDense
	}
	return l.measure(path)
}

// scriptedTranscriber returns two one-second segments, at the start and the middle of the
// request's duration, and records the requests it got.
type scriptedTranscriber struct {
	mu       sync.Mutex
	requests []providers.TranscribeRequest
	fail     atomic.Bool
	// englishOnly makes the engine unable to translate, as whisper with an .en model.
	englishOnly atomic.Bool
}

func (s *scriptedTranscriber) Available() error { return nil }

func (s *scriptedTranscriber) Translates() error {
	if s.englishOnly.Load() {
		return errors.New("the model is English-only")
	}
	return nil
}

func (s *scriptedTranscriber) Transcribe(ctx context.Context, req providers.TranscribeRequest) (providers.Transcript, error) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if s.fail.Load() {
		return providers.Transcript{}, errors.New("engine exploded")
	}
	if _, err := os.Stat(req.Path); err != nil {
		return providers.Transcript{}, err
	}
	req.Report(60)
	half := req.Duration / 2
	return providers.Transcript{Language: "english", Duration: req.Duration, Text: "One. Two.",
		// Each word said in a second: a word over a minute is a hallucination that
		// providers/transcript drops, and no cue lasts more than 7 s.
		Segments: []providers.Segment{{Start: 0, End: time.Second, Text: "One."}, {Start: half, End: half + time.Second, Text: "Two."}}}, nil
}

// scriptedLinks serves "videos" whose durations the test sets; fetching writes the current
// duration into the file, as lengthInFile reads it.
type scriptedLinks struct {
	mu        sync.Mutex
	durations map[string]time.Duration
	// silent links have no speech: found while analysing ("measured") or only once the
	// audio is fetched ("unmeasured": too big to measure before payment).
	silent map[string]string
	// analyses counts the calls to Analyze.
	analyses atomic.Int32
}

func (l *scriptedLinks) silence(link, when string) {
	l.mu.Lock()
	if l.silent == nil {
		l.silent = map[string]string{}
	}
	l.silent[link] = when
	l.mu.Unlock()
}

func (l *scriptedLinks) set(link string, d time.Duration) {
	l.mu.Lock()
	l.durations[link] = d
	l.mu.Unlock()
}

func (l *scriptedLinks) get(link string) (time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.durations[link]
	if !ok {
		return 0, fmt.Errorf("%w: %s", links.ErrVideoUnavailable, link)
	}
	return d, nil
}

func (l *scriptedLinks) Analyze(_ context.Context, _, raw string) (links.LinkInfo, error) {
	l.analyses.Add(1)
	d, err := l.get(raw)
	info := links.LinkInfo{Site: "direct", URL: raw, Duration: d, Speech: d, SpeechMeasured: true}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.silent[raw] {
	case "measured":
		info.Speech = 0
	case "unmeasured":
		info.Speech, info.SpeechMeasured = 0, false
	}
	return info, err
}

func (l *scriptedLinks) FetchAudio(_ context.Context, info links.LinkInfo, dst string) error {
	d, err := l.get(info.URL)
	if err != nil {
		return err
	}
	content := d.String()
	l.mu.Lock()
	if l.silent[info.URL] != "" {
		content += " silent"
	}
	l.mu.Unlock()
	return os.WriteFile(dst, []byte(content), 0o600)
}

// upload streams content into an incoming file and accepts it.
func (f *fixture) upload(t *testing.T, content string) (Upload, int64, error) {
	t.Helper()
	return f.uploadFrom(t, "198.51.100.1", content)
}

// uploadFrom is upload sent from client's address.
func (f *fixture) uploadFrom(t *testing.T, client, content string) (Upload, int64, error) {
	t.Helper()
	in, err := f.book.Intake.IncomingFile()
	if err != nil {
		t.Fatal(err)
	}
	in.WriteString(content)
	in.Close()
	return f.book.Intake.AcceptUpload(context.Background(), in.Name(), "../../etc/My\x00 talk.mp3", client, int64(len(content)))
}

func (f *fixture) transcriptOrder(upload, link string) TranscriptRequest {
	return TranscriptRequest{Upload: upload, Link: link, Format: "srt", Language: "en",
		Email: "listener@example.com", EmailVerify: "listener@example.com", Locale: "ru"}
}

func files(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestAudioOrderFromUploadToDelivery(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	u, amount, err := f.upload(t, "125.2s")
	if err != nil {
		t.Fatal(err)
	}
	// 126 s → ceil(99 × 126 / 100) = 125 cents
	if amount != 125 || u.Duration != 125200*time.Millisecond || u.Speech != u.Duration || u.FileName != "My talk.mp3" {
		t.Fatalf("upload %+v priced %d", u, amount)
	}
	if got := files(t, f.uploads); len(got) != 1 || got[0] != u.ID || len(files(t, f.tmp)) != 0 {
		t.Fatalf("uploads %v, tmp %v", got, files(t, f.tmp))
	}
	co, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(u.ID, ""))
	if err != nil || co.Amount != 125 {
		t.Fatalf("CreateSTT = %+v, %v", co, err)
	}
	// Paying again through a second checkout of the same upload is allowed until one is paid.
	co2, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(u.ID, ""))
	if err != nil {
		t.Fatal(err)
	}
	f.pay(t, co2.SessionID)
	o := f.waitStatus(t, co2.OrderID, Done)
	if !strings.HasSuffix(o.ResultName, ".srt") || !strings.HasPrefix(o.ResultName, "parla-transcript-") {
		t.Errorf("result name %q", o.ResultName)
	}
	obj, err := f.files.Get(ctx, o.ResultKey)
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, obj.Size)
	obj.Body.Read(body)
	obj.Body.Close()
	if !strings.HasPrefix(string(body), "1\n00:00:00,000 --> 00:00:01,000\nOne.") {
		t.Errorf("transcript:\n%s", body)
	}
	if r := f.stt.requests; len(r) != 1 || r[0].Language != "en" || r[0].Duration != u.Duration {
		t.Errorf("engine requests %+v", r)
	}
	if left := files(t, f.uploads); len(left) != 0 {
		t.Errorf("upload kept after delivery: %v", left)
	}
	if _, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(u.ID, "")); !errors.Is(err, ErrUploadNotFound) {
		t.Errorf("ordering a delivered upload again: %v", err)
	}
	if _, err := f.book.Cashier.Result(ctx, STT, co.SessionID); !errors.Is(err, ErrUnpaid) {
		t.Errorf("the unpaid checkout: %v", err)
	}
	if len(f.mails(t)) != 1 {
		t.Errorf("%d messages", len(f.mails(t)))
	}
	// The upload id lets whoever holds it order the file's transcription: logs carry a
	// reference instead.
	if logs := f.logs.String(); strings.Contains(logs, u.ID) || !strings.Contains(logs, uploadRef(u.ID)) {
		t.Errorf("the log names the upload by its id, or not at all:\n%s", logs)
	}
}

func TestUploadsAreRefusedCleanly(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct {
		content, code string
	}{{"", "empty_file"}, {"not audio", "unreadable_audio"}, {"30s silent", "no_speech"}} {
		_, _, err := f.upload(t, c.content)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Code != c.code {
			t.Errorf("%q: %v, want %s", c.content, err, c.code)
		}
	}
	if len(files(t, f.uploads))+len(files(t, f.tmp)) != 0 {
		t.Errorf("left behind: %v %v", files(t, f.uploads), files(t, f.tmp))
	}
	u, _, _ := f.upload(t, "3s")
	for _, c := range []struct {
		edit func(*TranscriptRequest)
		code string
	}{
		{func(r *TranscriptRequest) { r.Format = "docx" }, "invalid_format"},
		{func(r *TranscriptRequest) { r.Language = "klingon" }, "invalid_language"},
		{func(r *TranscriptRequest) { r.EmailVerify = "other@example.com" }, "email_mismatch"},
		{func(r *TranscriptRequest) { r.Locale = "fr" }, "invalid_locale"},
	} {
		req := f.transcriptOrder(u.ID, "")
		c.edit(&req)
		_, err := f.book.Desk.CreateSTT(context.Background(), req)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Code != c.code {
			t.Errorf("want %s, got %v", c.code, err)
		}
	}
	req := f.transcriptOrder("no-such-upload", "")
	if _, err := f.book.Desk.CreateSTT(context.Background(), req); !errors.Is(err, ErrUploadNotFound) {
		t.Errorf("unknown upload: %v", err)
	}
	req = f.transcriptOrder(u.ID, "")
	wrong := int64(98)
	req.ClientAmount = &wrong
	if _, err := f.book.Desk.CreateSTT(context.Background(), req); !errors.Is(err, ErrPriceMismatch) {
		t.Errorf("stale price: %v", err)
	}
	req.Format = ""
	req.ClientAmount = nil
	co, err := f.book.Desk.CreateSTT(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := f.book.orders.Get(context.Background(), co.OrderID)
	if !strings.Contains(string(o.Params), `"format":"json"`) {
		t.Errorf("empty format should mean json: %s", o.Params)
	}
}

// An upload longer than STTMaxDuration (3 h by default) is refused, not priced (issue 22:
// a 28 KB file was sold as 4.6 hours), and leaves nothing behind.
func TestUploadLongerThanTheLongestTakenIsRefused(t *testing.T) {
	f := newFixture(t, nil)
	var ie *InputError
	for _, content := range []string{"3h0m1s", "91h"} {
		_, amount, err := f.upload(t, content)
		if !errors.As(err, &ie) || ie.Code != "audio_too_long" {
			t.Errorf("%s: %v (priced %d), want audio_too_long", content, err, amount)
		}
	}
	if _, _, err := f.upload(t, "dense"); !errors.As(err, &ie) || ie.Code != "audio_too_dense" {
		t.Errorf("a decode bomb: %v, want audio_too_dense", err)
	}
	if _, _, err := f.upload(t, "3h"); err != nil {
		t.Errorf("exactly 3 h: %v", err)
	}
	if n := len(files(t, f.uploads)) + len(files(t, f.tmp)); n != 1 {
		t.Errorf("%d files kept, want the one taken", n)
	}
}

func TestSweeperDeletesUnpaidUploadsOnlyAfterTheirTime(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.UploadTTL = time.Hour })
	ctx := context.Background()
	idle, _, _ := f.upload(t, "3s")
	unpaid, _, _ := f.upload(t, "4s")
	if _, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(unpaid.ID, "")); err != nil {
		t.Fatal(err)
	}
	waiting, _, _ := f.upload(t, "5s")
	co, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(waiting.ID, ""))
	if err != nil {
		t.Fatal(err)
	}
	// Paid, but the engine fails: the upload must survive the sweep while the job retries.
	f.stt.fail.Store(true)
	f.pay(t, co.SessionID)
	if rep, _ := f.book.Sweep(ctx); rep.Uploads != 0 {
		t.Fatalf("swept %d uploads before their time", rep.Uploads)
	}
	f.clock.Advance(time.Hour + time.Second)
	rep, err := f.book.Sweep(ctx)
	if err != nil || rep.Uploads != 2 {
		t.Fatalf("sweep = %+v, %v; want the idle and the unpaid upload", rep, err)
	}
	left := files(t, f.uploads)
	if len(left) > 1 || (len(left) == 1 && left[0] != waiting.ID) {
		t.Errorf("left %v, want only the paid upload (%s) or none once refunded", left, waiting.ID)
	}
	for _, id := range []string{idle.ID, unpaid.ID} {
		if _, err := f.book.Desk.uploads.row(ctx, id); !errors.Is(err, ErrUploadNotFound) {
			t.Errorf("upload %s still recorded: %v", id, err)
		}
	}
	// The failing job ends in a refund, and the upload goes with it.
	o := f.waitStatus(t, co.OrderID, Refunded)
	if o.Error != "production_failed" || len(files(t, f.uploads)) != 0 {
		t.Errorf("refunded order %+v, uploads %v", o, files(t, f.uploads))
	}
}

func TestVideoOrderIsPricedFromTheServersAnalysis(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.VTTMaxDuration = time.Hour })
	ctx := context.Background()
	link := "https://videos.example/talk.mp4"
	f.links.set(link, 90*time.Second)
	info, amount, err := f.book.Intake.AnalyzeLink(ctx, "203.0.113.9", link)
	if err != nil || amount != 149 || info.Duration != 90*time.Second { // ceil(99 × 90 / 60)
		t.Fatalf("AnalyzeLink = %+v, %d, %v", info, amount, err)
	}
	// The page saw 90 s; the video is now 10 min: the checkout is priced anew and refuses
	// the stale amount.
	f.links.set(link, 10*time.Minute)
	req := f.transcriptOrder("", link)
	stale := int64(149)
	req.ClientAmount = &stale
	if _, err := f.book.Desk.CreateVTT(ctx, req); !errors.Is(err, ErrPriceMismatch) {
		t.Fatalf("stale analysis: %v", err)
	}
	req.ClientAmount = nil
	co, err := f.book.Desk.CreateVTT(ctx, req)
	if err != nil || co.Amount != 990 {
		t.Fatalf("CreateVTT = %+v, %v", co, err)
	}
	f.pay(t, co.SessionID)
	o := f.waitStatus(t, co.OrderID, Done)
	if !strings.HasSuffix(o.ResultName, ".srt") || len(files(t, f.tmp)) != 0 {
		t.Errorf("result %q, tmp %v", o.ResultName, files(t, f.tmp))
	}

	f.links.set(link, 2*time.Hour)
	var ie *InputError
	if _, _, err := f.book.Intake.AnalyzeLink(ctx, "203.0.113.9", link); !errors.As(err, &ie) || ie.Code != "video_too_long" {
		t.Errorf("over the maximum: %v", err)
	}
	if _, _, err := f.book.Intake.AnalyzeLink(ctx, "203.0.113.9", "  "); !errors.As(err, &ie) || ie.Code != "empty_link" {
		t.Errorf("empty link: %v", err)
	}
}

func TestVideoThatChangedOrVanishedIsRefundedAtOnce(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(l *scriptedLinks, link string)
		reason string
	}{
		{"longer", func(l *scriptedLinks, link string) { l.set(link, 5*time.Minute) }, "source_changed"},
		{"gone", func(l *scriptedLinks, link string) {
			l.mu.Lock()
			delete(l.durations, link)
			l.mu.Unlock()
		}, "source_gone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(cfg *Config) { cfg.MaxAttempts = 5; cfg.RetryBase = time.Hour })
			link := "https://videos.example/" + c.name
			f.links.set(link, time.Minute)
			co, err := f.book.Desk.CreateVTT(context.Background(), f.transcriptOrder("", link))
			if err != nil {
				t.Fatal(err)
			}
			c.change(f.links, link)
			f.pay(t, co.SessionID)
			// With an hour between retries, only a permanent failure refunds within the test.
			o := f.waitStatus(t, co.OrderID, Refunded)
			if o.Error != c.reason || len(f.stt.requests) != 0 {
				t.Errorf("error %q, engine calls %d", o.Error, len(f.stt.requests))
			}
		})
	}
}

// A video with no speech is refused before payment when the analysis measured it, and
// refunded at once, before the engine runs, when only the fetched audio shows it.
func TestVideoWithoutSpeech(t *testing.T) {
	f := newFixture(t, func(cfg *Config) { cfg.MaxAttempts = 5; cfg.RetryBase = time.Hour })
	ctx := context.Background()
	measured, late := "https://videos.example/quiet.mp4", "https://videos.example/big-quiet.mp4"
	f.links.set(measured, time.Minute)
	f.links.silence(measured, "measured")
	var ie *InputError
	if _, _, err := f.book.Intake.AnalyzeLink(ctx, "203.0.113.9", measured); !errors.As(err, &ie) || ie.Code != "no_speech" {
		t.Errorf("analysing a silent video: %v", err)
	}
	if _, err := f.book.Desk.CreateVTT(ctx, f.transcriptOrder("", measured)); !errors.As(err, &ie) || ie.Code != "no_speech" {
		t.Errorf("ordering a silent video: %v", err)
	}
	f.links.set(late, time.Minute)
	f.links.silence(late, "unmeasured")
	co, err := f.book.Desk.CreateVTT(ctx, f.transcriptOrder("", late))
	if err != nil {
		t.Fatal(err)
	}
	f.pay(t, co.SessionID)
	o := f.waitStatus(t, co.OrderID, Refunded)
	if o.Error != "no_speech" || len(f.stt.requests) != 0 {
		t.Errorf("error %q, engine calls %d", o.Error, len(f.stt.requests))
	}
}

func TestLengthChangedAllowsEncoderRounding(t *testing.T) {
	for _, c := range []struct {
		now, paid int64
		want      bool
	}{{60, 60, false}, {62, 60, false}, {63, 60, true}, {57, 60, true}, {3672, 3600, false}, {3673, 3600, true}} {
		if got := lengthChanged(c.now, c.paid); got != c.want {
			t.Errorf("lengthChanged(%d, %d) = %v", c.now, c.paid, got)
		}
	}
}

func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"talk.mp3": "talk.mp3", "../../etc/passwd": "passwd", `C:\Users\me\voice.m4a`: "voice.m4a",
		"a\r\nb.mp3": "ab.mp3", "": "", "/": "", strings.Repeat("я", 150): strings.Repeat("я", 100),
		"evil\u202Egpj.mp3": "evilgpj.mp3", "\u2066مرحبا\u2069.m4a": "مرحبا.m4a", "a\u200Fb\u061C.wav": "ab.wav",
	} {
		if got := displayName(in); got != want {
			t.Errorf("displayName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Two checkouts of one upload (two tabs), both paid: the first payment gets the transcript,
// the second is refunded with a letter, and the file stays until the first job ends.
func TestTwoPaidOrdersOfOneUpload(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	u, _, err := f.upload(t, "12s")
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(u.ID, ""))
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(u.ID, ""))
	if err != nil {
		t.Fatal(err)
	}
	f.pay(t, second.SessionID) // the later checkout is paid first: it holds the file
	f.pay(t, first.SessionID)
	if o := f.waitStatus(t, first.OrderID, Refunded); o.Error != "upload_taken" {
		t.Errorf("the second payment: %+v", o)
	}
	if o := f.waitStatus(t, second.OrderID, Done); o.ResultKey == "" {
		t.Errorf("the first payment: %+v", o)
	}
	refunds, _ := f.test.Refunds(ctx)
	if len(refunds) != 1 || len(f.mails(t)) != 2 {
		t.Errorf("%d refunds, %d mails; want 1 and 2", len(refunds), len(f.mails(t)))
	}
}

// An order for an English translation keeps the wish in its parameters, hands it to the
// engine and says so in the delivery letter; an order without it stays a transcript.
func TestTranslationOrder(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	for _, translate := range []bool{true, false} {
		u, _, err := f.upload(t, "20s")
		if err != nil {
			t.Fatal(err)
		}
		req := f.transcriptOrder(u.ID, "")
		req.Locale = "en"
		req.Translate = translate
		co, err := f.book.Desk.CreateSTT(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if stored, _ := f.book.orders.Get(ctx, co.OrderID); strings.Contains(string(stored.Params), `"translate":true`) != translate {
			t.Errorf("translate %v: stored %s", translate, stored.Params)
		}
		f.pay(t, co.SessionID)
		o := f.waitStatus(t, co.OrderID, Done)
		// Done, the parameters are erased; the result's name still says what it is.
		if Translated(o) != translate || strings.HasPrefix(o.ResultName, "parla-translation-") != translate {
			t.Errorf("translate %v: result %q", translate, o.ResultName)
		}
		f.stt.mu.Lock()
		last := f.stt.requests[len(f.stt.requests)-1]
		f.stt.mu.Unlock()
		if last.Translate != translate {
			t.Errorf("translate %v: the engine was asked %+v", translate, last)
		}
		m, err := MailLetters{}.Delivered(o, "https://parla.example/d/x")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(m.Text, "English translation"); got != translate {
			t.Errorf("translate %v: the letter says:\n%s", translate, m.Text)
		}
	}
}

// An engine that cannot translate is never paid for a translation: the checkout refuses it
// before anything is stored or the upload is claimed, and a paid order whose engine lost the
// ability since (another model) is refunded at once, not retried.
func TestTranslationRefusedWhenTheEngineCannot(t *testing.T) {
	f := newFixture(t, func(cfg *Config) { cfg.MaxAttempts = 5; cfg.RetryBase = time.Hour })
	ctx := context.Background()
	f.stt.englishOnly.Store(true)
	if f.book.Desk.Translates() == nil {
		t.Fatal("Desk.Translates: nil for an English-only engine")
	}
	u, _, err := f.upload(t, "20s")
	if err != nil {
		t.Fatal(err)
	}
	req := f.transcriptOrder(u.ID, "")
	req.Translate = true
	var ie *InputError
	if _, err := f.book.Desk.CreateSTT(ctx, req); !errors.As(err, &ie) || ie.Code != "translation_unavailable" {
		t.Fatalf("audio: %v, want translation_unavailable", err)
	}
	link := "https://videos.example/talk.mp4"
	f.links.set(link, 30*time.Second)
	vreq := f.transcriptOrder("", link)
	vreq.Translate = true
	if _, err := f.book.Desk.CreateVTT(ctx, vreq); !errors.As(err, &ie) || ie.Code != "translation_unavailable" {
		t.Fatalf("video: %v, want translation_unavailable", err)
	}
	var n int
	if err := f.book.Desk.orders.db.QueryRow(`SELECT count(*) FROM orders`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d orders stored (%v), want none", n, err)
	}
	// The same upload can still be ordered as a transcript: the refusal claimed nothing.
	req.Translate = false
	if _, err := f.book.Desk.CreateSTT(ctx, req); err != nil {
		t.Fatalf("transcript of the same upload: %v", err)
	}

	// Paid while the engine could translate, produced after it could not.
	f.stt.englishOnly.Store(false)
	u2, _, err := f.upload(t, "20s")
	if err != nil {
		t.Fatal(err)
	}
	req2 := f.transcriptOrder(u2.ID, "")
	req2.Translate = true
	co, err := f.book.Desk.CreateSTT(ctx, req2)
	if err != nil {
		t.Fatal(err)
	}
	f.stt.englishOnly.Store(true)
	f.pay(t, co.SessionID)
	o := f.waitStatus(t, co.OrderID, Refunded)
	f.stt.mu.Lock()
	calls := len(f.stt.requests)
	f.stt.mu.Unlock()
	if o.Error != "translation_unavailable" || calls != 0 {
		t.Errorf("error %q, engine calls %d; want translation_unavailable and none", o.Error, calls)
	}
}

// Two runs of one video order on one node (a takeover of a run that is still fetching)
// fetch into scratch files of their own: one's cleanup never removes the other's audio,
// and neither writes into the other's file.
func TestVideoRunsFetchIntoTheirOwnScratchFiles(t *testing.T) {
	const link = "https://videos.example/talk.mp4"
	l := &scriptedLinks{durations: map[string]time.Duration{link: 30 * time.Second}}
	tmp := t.TempDir()
	p := &transcriptProducer{links: l, audio: lengthInFile{}, tempDir: tmp}
	o := Order{ID: "ord_scratch", Service: VTT}
	params := TranscriptParams{Seconds: 30, Link: linkParams(links.LinkInfo{Site: "direct", URL: link, Duration: 30 * time.Second})}
	ctx := context.Background()
	first, _, cleanFirst, err := p.source(ctx, o, params)
	if err != nil {
		t.Fatal(err)
	}
	second, _, cleanSecond, err := p.source(ctx, o, params)
	if err != nil {
		t.Fatal(err)
	}
	if first == second {
		t.Fatalf("both runs fetch into %s", first)
	}
	cleanFirst()
	if _, err := os.Stat(second); err != nil {
		t.Errorf("the first run's cleanup removed the second's audio: %v", err)
	}
	cleanSecond()
	if left := files(t, tmp); len(left) != 0 {
		t.Errorf("scratch left behind: %v", left)
	}
}
