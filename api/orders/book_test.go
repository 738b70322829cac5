package orders

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/media"
	"parla/providers"
	"parla/providers/mail"
	"parla/providers/storage"
	"parla/providers/stripe"
	"parla/providers/testkit"
)

// scriptedSpeaker stands in for an engine: it writes fixed bytes, or fails a set number of
// times first, and counts its calls. Engines themselves are tested in their packages.
type scriptedSpeaker struct {
	failures atomic.Int32 // calls that fail before one succeeds; -1 = always fail
	calls    atomic.Int32
	hold     atomic.Pointer[chan struct{}] // when set, each call waits for it to close
	// working, when set, makes each call work until its context ends, every 20 ms passing
	// the process gate when gated is set and reporting rising progress when progress is;
	// it returns the gate's refusal or the context's end, recorded in stopped.
	working, gated, progress atomic.Bool
	// misreads, with gated, makes a refusal of the gate read as a fault of the input, as an
	// ffmpeg that could not start reads (a permanent failure).
	misreads atomic.Bool
	stopped  atomic.Pointer[error]
}

// work is a call of a speaker set working.
func (s *scriptedSpeaker) work(ctx context.Context, req providers.SpeechRequest) error {
	for p := 1; ; p++ {
		err := ctx.Err()
		if err == nil && s.gated.Load() {
			err = media.ProcessGate(ctx)
		}
		if err != nil {
			s.stopped.Store(&err)
			if s.misreads.Load() {
				return permanent("source_changed", err)
			}
			return err
		}
		if s.progress.Load() && req.Progress != nil {
			req.Progress(min(p, 99))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *scriptedSpeaker) Available() error { return nil }

func (s *scriptedSpeaker) Speak(ctx context.Context, req providers.SpeechRequest, w io.Writer) error {
	s.calls.Add(1)
	if s.working.Load() {
		return s.work(ctx, req)
	}
	if h := s.hold.Load(); h != nil {
		select {
		case <-*h:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f := s.failures.Load(); f != 0 {
		if f > 0 {
			s.failures.Add(-1)
		}
		return errors.New("engine exploded")
	}
	if req.Progress != nil {
		req.Progress(50)
	}
	_, err := io.WriteString(w, "ID3 fake audio for "+req.Voice)
	return err
}

// clock is a controllable clock for the sweeper and link expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	book    *Book
	deps    Deps
	logs    *testkit.LogBuffer
	stt     *scriptedTranscriber
	links   *scriptedLinks
	uploads string
	test    *stripe.TestCheckout
	files   *storage.Disk
	outbox  string
	speaker *scriptedSpeaker
	clock   *clock
	tmp     string
}

func newFixture(t *testing.T, edit func(*Config)) *fixture {
	t.Helper()
	return newFixtureDeps(t, edit, nil)
}

// newFixtureDeps is newFixture with the dependencies edited before the book is built.
func newFixtureDeps(t *testing.T, edit func(*Config), editDeps func(*Deps)) *fixture {
	t.Helper()
	dir := t.TempDir()
	db := testkit.OpenDB(t)
	clk := &clock{now: time.Now().UTC()}
	tc, err := stripe.NewTestCheckout(db, "http://parla.test/checkout/test/", clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	files, err := storage.NewDisk(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	outbox := filepath.Join(dir, "outbox")
	mailer, err := mail.NewOutbox(outbox)
	if err != nil {
		t.Fatal(err)
	}
	tmp, uploads := filepath.Join(dir, "tmp"), filepath.Join(dir, "uploads")
	os.MkdirAll(tmp, 0o755)
	os.MkdirAll(uploads, 0o755)
	cfg := Config{
		PublicURL: "http://parla.test", Routes: testRoutes, TempDir: tmp, UploadDir: uploads, Now: clk.Now,
		TTS:       TTSLimits{Voices: providers.Voices, Formats: providers.SpeechFormats, MinSpeed: 0.25, MaxSpeed: 4, MaxChars: 5000},
		RetryBase: 10 * time.Millisecond, MaxAttempts: 3, PollInterval: 20 * time.Millisecond,
		SweepInterval: time.Hour, ReconcileInterval: time.Hour,
	}
	if edit != nil {
		edit(&cfg)
	}
	sp, stt, links := &scriptedSpeaker{}, &scriptedTranscriber{}, &scriptedLinks{durations: map[string]time.Duration{}}
	logs := &testkit.LogBuffer{}
	deps := Deps{DB: db, Payments: tc, Storage: files,
		Mailer: mailer, Letters: MailLetters{}, Speaker: sp,
		Transcriber: stt, Audio: lengthInFile{}, Links: links,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if editDeps != nil {
		editDeps(&deps)
	}
	book, err := New(context.Background(), cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := book.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, c2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer c2()
		book.Stop(stopCtx)
		cancel()
	})
	return &fixture{book: book, deps: deps, logs: logs, test: tc, files: files, outbox: outbox, speaker: sp, clock: clk, tmp: tmp,
		stt: stt, links: links, uploads: uploads}
}

func (f *fixture) order(t *testing.T, text string) Checkout {
	t.Helper()
	co, err := f.book.Desk.CreateTTS(context.Background(), TTSRequest{
		Params: TTSParams{Voice: "nova", Format: "mp3", Speed: 1, Text: text},
		Email:  "visitor@example.com", EmailVerify: "visitor@example.com", Locale: "es",
	})
	if err != nil {
		t.Fatalf("CreateTTS: %v", err)
	}
	return co
}

// pay pays on the test checkout and delivers the webhook-equivalent event.
func (f *fixture) pay(t *testing.T, sessionID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.test.Pay(ctx, sessionID); err != nil {
		t.Fatal(err)
	}
	ts, err := f.test.Get(ctx, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	err = f.book.Cashier.HandleEvent(ctx, PaymentEvent{ID: "evt_" + sessionID, Type: "checkout.session.completed", Session: ts.Checkout()})
	if err != nil {
		t.Fatal(err)
	}
}

// paidStopped orders text and pays it with the book stopped, so that no worker takes its
// job: the test plays the runs itself.
func (f *fixture) paidStopped(t *testing.T, text string) Checkout {
	t.Helper()
	co := f.order(t, text)
	if err := f.book.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.pay(t, co.SessionID)
	return co
}

func (f *fixture) waitStatus(t *testing.T, id string, want Status) Order {
	t.Helper()
	var o Order
	if !testkit.WaitFor(10*time.Second, func() bool {
		var err error
		if o, err = f.book.orders.Get(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return o.Status == want
	}) {
		t.Fatalf("order %s stuck in %s (want %s), error %q", id, o.Status, want, o.Error)
	}
	return o
}

// delivered places, pays and waits for one delivered order.
func (f *fixture) delivered(t *testing.T, text string) Order {
	t.Helper()
	co := f.order(t, text)
	f.pay(t, co.SessionID)
	return f.waitStatus(t, co.OrderID, Done)
}

// producing pays a speech order of text and holds it in the engine: it is processing
// when producing returns, and stays so until release is called.
func (f *fixture) producing(t *testing.T, text string) (co Checkout, release func()) {
	t.Helper()
	hold := make(chan struct{})
	f.speaker.hold.Store(&hold)
	co = f.order(t, text)
	f.pay(t, co.SessionID)
	f.waitStatus(t, co.OrderID, Processing)
	return co, func() { close(hold) }
}

// jobState is the fulfil job's state in River's table.
func (f *fixture) jobState(t *testing.T) string {
	t.Helper()
	var state string
	f.book.Desk.orders.db.QueryRowContext(context.Background(), `SELECT state FROM river_job WHERE kind = 'fulfil'`).Scan(&state)
	return state
}

// restart replaces the book with a new one on the same database and started, as a new
// process would be after the previous one died; it is stopped when the test ends.
func (f *fixture) restart(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	book, err := New(ctx, f.book.cfg, f.deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := book.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { book.Stop(ctx) })
	f.book = book
}

// testRoutes are the site's addresses as api gives them (api.OrderRoutes, which api's
// tests hold to the routes it serves).
var testRoutes = Routes{
	Success:  map[Service]string{TTS: "/payment/success", STT: "/sst-payment/success", VTT: "/vtt-payment/success"},
	Cancel:   map[Service]string{TTS: "/tts", STT: "/sst", VTT: "/vtt"},
	Download: "/d/",
	Page:     "/r/",
}

// exec runs a statement on the book's database ("?" placeholders) or fails the test.
func (f *fixture) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := f.book.Desk.orders.db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) mails(t *testing.T) []string {
	t.Helper()
	entries, _ := os.ReadDir(f.outbox)
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".eml") {
			b, err := os.ReadFile(filepath.Join(f.outbox, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	return out
}

func TestPaidOrderIsProducedStoredLinkedAndMailed(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.order(t, "Hola, mundo.")
	if co.Amount != 99 || co.Currency != "eur" || !strings.HasPrefix(co.URL, "http://parla.test/checkout/test/") {
		t.Fatalf("checkout = %+v", co)
	}
	if _, err := f.book.Cashier.Result(ctx, TTS, co.SessionID); !errors.Is(err, ErrUnpaid) {
		t.Fatalf("Result before payment = %v, want ErrUnpaid", err)
	}
	f.pay(t, co.SessionID)
	o := f.waitStatus(t, co.OrderID, Done)

	if o.Email != "" || string(o.Params) != "{}" {
		t.Errorf("address or text kept after delivery: email=%q params=%s", o.Email, o.Params)
	}
	if l, err := f.book.Cashier.Lookup(ctx, TTS, co.SessionID); err != nil || l.Session.Email != "" {
		t.Errorf("the session lookup still returns the address after delivery: %q, %v", l.Session.Email, err)
	}
	if o.Progress != 100 || o.LinkToken == "" || o.PaymentIntent == "" {
		t.Errorf("delivered order = %+v", o)
	}
	if got := o.LinkExpiresAt.Sub(o.DoneAt); got < 10*24*time.Hour-time.Second || got > 10*24*time.Hour {
		t.Errorf("link lives %v after delivery, want 10 days", got)
	}
	got, err := f.book.Download(ctx, o.LinkToken)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := f.files.Get(ctx, got.ResultKey)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if !bytes.Equal(body, []byte("ID3 fake audio for nova")) {
		t.Errorf("stored result = %q", body)
	}
	mails := f.mails(t)
	if len(mails) != 1 {
		t.Fatalf("%d messages in the outbox, want 1", len(mails))
	}
	if !strings.Contains(mails[0], "To: <visitor@example.com>") && !strings.Contains(mails[0], "To: <visitor@example.com>") {
		t.Errorf("message not addressed to the visitor:\n%s", mails[0][:min(len(mails[0]), 600)])
	}
	// The letter gives the link page (safe for a mail scanner to open), not the download.
	if !strings.Contains(mails[0], f.book.PageLink(o)) || strings.Contains(mails[0], f.book.Link(o)) {
		t.Errorf("message lacks the page link %s or gives the download", f.book.PageLink(o))
	}
}

func TestFulfilmentHappensOnceWhateverArrivesTwice(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.order(t, "Once only.")
	f.pay(t, co.SessionID)
	ts, _ := f.test.Get(ctx, co.SessionID)
	// the same event again, the confirmation page's lookup, and a second event id
	if err := f.book.Cashier.HandleEvent(ctx, PaymentEvent{ID: "evt_" + co.SessionID, Type: "checkout.session.completed", Session: ts.Checkout()}); !errors.Is(err, ErrDuplicateEvent) {
		t.Errorf("repeated event = %v, want ErrDuplicateEvent", err)
	}
	if _, err := f.book.Cashier.Lookup(ctx, TTS, co.SessionID); err != nil {
		t.Fatal(err)
	}
	if err := f.book.Cashier.HandleEvent(ctx, PaymentEvent{ID: "evt_other", Type: "checkout.session.async_payment_succeeded", Session: ts.Checkout()}); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(t, co.OrderID, Done)
	// an expiry notice arriving late must not undo a paid order
	if err := f.book.Cashier.HandleEvent(ctx, PaymentEvent{ID: "evt_late_expiry", Type: "checkout.session.expired", Session: ts.Checkout()}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // under test: a second production or letter, had the notice undone the order, would start now
	if n := f.speaker.calls.Load(); n != 1 {
		t.Errorf("engine ran %d times, want 1", n)
	}
	if n := len(f.mails(t)); n != 1 {
		t.Errorf("%d messages sent, want 1", n)
	}
	o := f.waitStatus(t, co.OrderID, Done)
	if o.Status != Done {
		t.Errorf("status after late expiry = %s", o.Status)
	}
}

func TestConfirmationPageStartsFulfilmentWithoutWebhook(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.order(t, "No webhook came.")
	if _, err := f.test.Pay(ctx, co.SessionID); err != nil {
		t.Fatal(err)
	}
	l, err := f.book.Cashier.Lookup(ctx, TTS, co.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Session.Paid() || !l.Order.Paid() {
		t.Fatalf("lookup after payment: session paid=%v order %s", l.Session.Paid(), l.Order.Status)
	}
	f.waitStatus(t, co.OrderID, Done)
	if _, err := f.book.Cashier.Lookup(ctx, STT, co.SessionID); !errors.Is(err, ErrWrongService) {
		t.Errorf("lookup under another service = %v, want ErrWrongService", err)
	}
	if _, err := f.book.Cashier.Lookup(ctx, TTS, "cs_test_unknown"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session = %v, want ErrNotFound", err)
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	f := newFixture(t, nil)
	f.speaker.failures.Store(2) // MaxAttempts is 3
	f.delivered(t, "Third time lucky.")
	if n := f.speaker.calls.Load(); n != 3 {
		t.Errorf("engine ran %d times, want 3", n)
	}
}

func TestFailingForGoodRefundsAndTellsTheVisitor(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.speaker.failures.Store(-1)
	co := f.order(t, "This will never be spoken.")
	f.pay(t, co.SessionID)
	o := f.waitStatus(t, co.OrderID, Refunded)
	refunded, err := f.test.RefundedIntent(ctx, o.PaymentIntent)
	if err != nil || !refunded {
		t.Fatalf("payment %s refunded = %v, %v", o.PaymentIntent, refunded, err)
	}
	if o.Email != "" || string(o.Params) != "{}" || o.Error == "" {
		t.Errorf("refunded order = %+v", o)
	}
	mails := f.mails(t)
	if len(mails) != 1 || strings.Contains(mails[0], "/d/") {
		t.Fatalf("want one refund message without a link, got %d", len(mails))
	}
	if n := f.speaker.calls.Load(); n != 3 {
		t.Errorf("engine ran %d times, want 3 attempts", n)
	}
	if _, err := f.book.Cashier.Result(ctx, TTS, co.SessionID); err != nil {
		t.Errorf("Result of a refunded order: %v", err)
	}
}

func TestPriceFromThePageMustMatch(t *testing.T) {
	f := newFixture(t, nil)
	stale := int64(99)
	_, err := f.book.Desk.CreateTTS(context.Background(), TTSRequest{
		Params: TTSParams{Voice: "alloy", Format: "mp3", Speed: 1, Text: strings.Repeat("x", 1001)},
		Email:  "a@example.com", EmailVerify: "a@example.com", ClientAmount: &stale, ClientCurrency: "eur",
	})
	if !errors.Is(err, ErrPriceMismatch) {
		t.Fatalf("stale price = %v, want ErrPriceMismatch", err)
	}
	right := int64(198)
	if _, err := f.book.Desk.CreateTTS(context.Background(), TTSRequest{
		Params: TTSParams{Voice: "alloy", Format: "mp3", Speed: 1, Text: strings.Repeat("x", 1001)},
		Email:  "a@example.com", EmailVerify: "a@example.com", ClientAmount: &right, ClientCurrency: "eur",
	}); err != nil {
		t.Fatalf("matching price refused: %v", err)
	}
}

func TestSweeperHonoursTheTenDays(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	o := f.delivered(t, "Keep me ten days.")
	unpaid := f.order(t, "Never paid.")
	stale := filepath.Join(f.tmp, "leftover-upload")
	os.WriteFile(stale, []byte("x"), 0o600)
	os.Chtimes(stale, f.clock.Now().Add(-7*time.Hour), f.clock.Now().Add(-7*time.Hour))
	fresh := filepath.Join(f.tmp, "in-progress")
	os.WriteFile(fresh, []byte("x"), 0o600)

	rep, err := f.book.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results != 0 || rep.Unpaid != 0 || rep.ScratchFiles != 1 {
		t.Errorf("first sweep = %+v, want only the stale scratch file", rep)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh scratch file swept: %v", err)
	}

	f.clock.Advance(o.LinkExpiresAt.Sub(f.clock.Now()) - time.Second)
	if _, err := f.book.Download(ctx, o.LinkToken); err != nil {
		t.Fatalf("link one second before 10 days: %v", err)
	}
	f.clock.Advance(time.Second)
	if _, err := f.book.Download(ctx, o.LinkToken); !errors.Is(err, ErrLinkExpired) {
		t.Fatalf("link at 10 days = %v, want ErrLinkExpired", err)
	}
	rep, err = f.book.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results != 1 || rep.Unpaid != 1 {
		t.Errorf("sweep after 10 days = %+v, want 1 result and 1 unpaid", rep)
	}
	if _, err := f.files.Get(ctx, o.ResultKey); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("result still stored after sweep: %v", err)
	}
	if _, err := f.files.Get(ctx, keptKey(o.ResultKey)); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("what the link page shows still stored after sweep: %v", err)
	}
	got, _ := f.book.orders.Get(ctx, o.ID)
	if got.Status != Expired {
		t.Errorf("swept order status = %s", got.Status)
	}
	u, _ := f.book.orders.Get(ctx, unpaid.OrderID)
	if u.Status != Expired || u.Email != "" {
		t.Errorf("unpaid order after sweep = %s, email %q", u.Status, u.Email)
	}
	if rep, _ := f.book.Sweep(ctx); rep != (SweepReport{}) {
		t.Errorf("second sweep found more: %+v", rep)
	}
}

// A process killed in the middle of a job leaves it "running"; the next process takes it up
// at once, and the order is delivered exactly once.
func TestRestartReclaimsJobsOfADeadProcess(t *testing.T) {
	f := newFixture(t, nil)
	// The dead process had paid the order, fetched its job and started producing.
	co := f.paidStopped(t, "Killed halfway.")
	f.exec(t, `UPDATE river_job SET state = 'running', attempt = 1 WHERE kind = 'fulfil'`)
	f.exec(t, `UPDATE orders SET status = 'processing', progress = 40 WHERE id = ?`, co.OrderID)
	// A new process on the same database.
	f.restart(t)
	o := f.waitStatus(t, co.OrderID, Done)
	if o.LinkToken == "" || len(f.mails(t)) != 1 || f.speaker.calls.Load() != 1 {
		t.Errorf("after restart: order %+v, %d mails, %d engine calls", o, len(f.mails(t)), f.speaker.calls.Load())
	}
}

// A payment that arrives after the order expired and was erased is refunded at once, with
// a letter to the address the payment provider knows that says why. Never silent.
func TestLatePaymentIsRefundedWithALetterThatSaysWhy(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.order(t, "Paid by a slow bank.")
	if _, err := f.test.Pay(ctx, co.SessionID); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(25 * time.Hour) // the notification is a day late; the sweep came first
	if rep, err := f.book.Sweep(ctx); err != nil || rep.Unpaid != 1 {
		t.Fatalf("sweep = %+v, %v", rep, err)
	}
	ts, err := f.test.Get(ctx, co.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.book.Cashier.HandleEvent(ctx, PaymentEvent{ID: "evt_late", Type: "checkout.session.async_payment_succeeded", Session: ts.Checkout()}); err != nil {
		t.Fatal(err)
	}
	o := f.waitStatus(t, co.OrderID, Refunded)
	if o.Error != "payment_late" || o.Email != "" {
		t.Errorf("late order = status %s, error %q, email %q", o.Status, o.Error, o.Email)
	}
	refunds, _ := f.test.Refunds(ctx)
	if len(refunds) != 1 || refunds[0].PaymentIntent != ts.PaymentIntent {
		t.Errorf("refunds = %+v", refunds)
	}
	mails := f.mails(t)
	if len(mails) != 1 || !strings.Contains(mails[0], "To: <visitor@example.com>") || !strings.Contains(mails[0], "caduc") {
		t.Errorf("mails (es) = %q", mails)
	}
	if f.speaker.calls.Load() != 0 {
		t.Error("the engine worked for an erased order")
	}
}

// A payment whose amount is not the order's price is refunded, not fulfilled.
// A session of total 0 (a 100 % discount) is compared too: before, a total of 0 skipped the
// comparison and delivered a priced order for nothing.
func TestPaymentOfTheWrongAmountIsRefunded(t *testing.T) {
	for _, paid := range []int64{1, 0} {
		f := newFixture(t, nil)
		ctx := context.Background()
		co := f.order(t, "Priced at 99.")
		if _, err := f.test.Pay(ctx, co.SessionID); err != nil {
			t.Fatal(err)
		}
		ts, err := f.test.Get(ctx, co.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		s := ts.Checkout()
		s.AmountTotal = paid
		if err := f.book.Cashier.HandleEvent(ctx, PaymentEvent{ID: "evt_cheap", Type: "checkout.session.completed", Session: s}); err != nil {
			t.Fatal(err)
		}
		if o := f.waitStatus(t, co.OrderID, Refunded); o.Error != "amount_mismatch" || f.speaker.calls.Load() != 0 {
			t.Errorf("paid %d: order %+v, engine calls %d", paid, o, f.speaker.calls.Load())
		}
	}
}

// A delivered speech order keeps what it was (voice, format, characters) beside its result
// for the link page; "delete now" erases both, and the link then answers as lapsed.
func TestKeptAndEraseNow(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	o := f.delivered(t, "Keep me ten days.")
	if len(o.Params) > 2 {
		t.Fatalf("parameters kept after delivery: %s", o.Params)
	}
	k, err := f.book.Results.Kept(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if k.Service != TTS || k.Characters != CountChars("Keep me ten days.") || k.Format == "" || k.Voice == "" || k.Transcript != nil {
		t.Errorf("kept %+v", k)
	}
	if _, _, _, err := f.book.Results.OtherFormat(ctx, o, "vtt"); !errors.Is(err, ErrNoSegments) {
		t.Errorf("a speech order in vtt: %v", err)
	}
	// Nor is there a transcript to edit.
	if _, _, err := f.book.Results.SaveEdit(ctx, o, []providers.Segment{{End: time.Second, Text: "x"}}, 0); !errors.Is(err, ErrNoSegments) {
		t.Errorf("editing speech: %v", err)
	}
	if _, ok, err := f.book.Results.EditedFormat(ctx, o); ok || err != nil {
		t.Errorf("speech edited? %t %v", ok, err)
	}
	if err := f.book.Results.Erase(ctx, o); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{o.ResultKey, keptKey(o.ResultKey)} {
		if _, err := f.files.Get(ctx, key); !errors.Is(err, providers.ErrNotFound) {
			t.Errorf("%s still stored after delete now: %v", key, err)
		}
	}
	if _, err := f.book.Download(ctx, o.LinkToken); !errors.Is(err, ErrLinkExpired) {
		t.Errorf("link after delete now = %v, want ErrLinkExpired", err)
	}
	if got, _ := f.book.orders.Get(ctx, o.ID); got.Status != Expired {
		t.Errorf("status after delete now = %s", got.Status)
	}
}

// On Postgres a booting node takes back only the running jobs of nodes that stopped
// beating: a job a live node is running is left to it.
func TestBootReclaimsOnlyTheJobsOfDeadNodes(t *testing.T) {
	f, co := runningOnAnotherNode(t, "live-node")
	db, ctx, now := f.book.Desk.orders.db, context.Background(), time.Now()
	if _, err := New(ctx, f.book.cfg, f.deps); err != nil { // another node boots
		t.Fatal(err)
	}
	var state string
	if err := db.QueryRowContext(ctx, `SELECT state FROM river_job WHERE kind = 'fulfil'`).Scan(&state); err != nil || state != "running" {
		t.Fatalf("the live node's job is %q (%v) after another node booted, want running", state, err)
	}
	// The node stops beating (killed): the next node to boot takes its job.
	f.exec(t, `UPDATE nodes SET seen_at = ? WHERE id = 'live-node'`, millis(now.Add(-time.Minute)))
	f.restart(t)
	if o := f.waitStatus(t, co.OrderID, Done); o.LinkToken == "" || len(f.mails(t)) != 1 {
		t.Errorf("after the dead node's job was taken: %+v, %d mails", o, len(f.mails(t)))
	}
}

// A paid order whose job the queue gave up without a result (River's rescuer discards a
// job stuck on its last attempt; an operator cancels one in River's UI) is found by the
// reconciler, failed and refunded with its letter: never left processing for good.
func TestReconcilerRefundsAnOrderWhoseJobWasLost(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.order(t, "Lost by the queue.")
	done := f.order(t, "Delivered as usual.")
	f.pay(t, done.SessionID)
	f.waitStatus(t, done.OrderID, Done)
	if err := f.book.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	f.pay(t, co.SessionID)
	f.exec(t, `UPDATE river_job SET state = 'discarded', attempt = 5, finalized_at = CURRENT_TIMESTAMP
		WHERE kind = 'fulfil' AND state = 'available'`)
	f.exec(t, `UPDATE orders SET status = 'processing' WHERE id = ?`, co.OrderID)
	f.restart(t)
	rep, err := f.book.Reconcile(ctx)
	if err != nil || rep["lost"] != 1 {
		t.Fatalf("reconciler: %v, %v; want the one lost order", rep, err)
	}
	o := f.waitStatus(t, co.OrderID, Refunded)
	if o.Error != "production_failed" {
		t.Errorf("refunded for %q", o.Error)
	}
	if refunds, _ := f.test.Refunds(ctx); len(refunds) != 1 {
		t.Errorf("%d refunds, want 1", len(refunds))
	}
	if d, _ := f.book.orders.Get(ctx, done.OrderID); d.Status != Done {
		t.Errorf("the delivered order became %s", d.Status)
	}
	if rep, _ := f.book.Reconcile(ctx); rep["lost"] != 0 {
		t.Errorf("a second pass found %d lost orders", rep["lost"])
	}
}

// River's rescuer hands a job that overran JOB_RESCUE_AFTER to another node on the same
// row, and the stale runner's outcome may cancel the row the new claimant runs (River's
// completer checks only that the row is running). The claimant's run may still deliver
// for as long as a run lasts (JOB_TIMEOUT after its attempt); after that the reconciler gives
// the order up and refunds it, rather than leaving it processing for good because its
// claimant lives. Postgres only.
func TestReconcilerRefundsAnOrderWhoseLiveClaimantsJobWasCancelled(t *testing.T) {
	f, co := runningOnAnotherNode(t, "live-node")
	ctx := context.Background()
	f.exec(t, `UPDATE orders SET claimed_by = 'live-node', claim = claim + 1, runs = runs + 1 WHERE id = ?`, co.OrderID)
	f.exec(t, `UPDATE river_job SET state = 'cancelled', finalized_at = now() WHERE kind = 'fulfil'`)
	beat := func() { f.exec(t, `UPDATE nodes SET seen_at = `+dbMillis+` WHERE id = 'live-node'`) }
	beat()
	if rep, err := f.book.Reconcile(ctx); err != nil || rep["lost"] != 0 || rep["unqueued"] != 0 {
		t.Fatalf("reconciler: %v, %v; want no lost order, none queued again, while the live claimant's run may still deliver", rep, err)
	}
	f.exec(t, `UPDATE river_job SET attempted_at = now() - make_interval(secs => ?) WHERE kind = 'fulfil'`,
		(f.book.cfg.JobTimeout + time.Minute).Seconds())
	f.restart(t)
	beat()
	rep, err := f.book.Reconcile(ctx)
	if err != nil || rep["lost"] != 1 {
		t.Fatalf("reconciler: %v, %v; want the order whose claimant's job ended a job timeout ago", rep, err)
	}
	if o := f.waitStatus(t, co.OrderID, Refunded); o.Error != "production_failed" {
		t.Errorf("refunded for %q", o.Error)
	}
	if refunds, _ := f.test.Refunds(ctx); len(refunds) != 1 {
		t.Errorf("%d refunds, want 1", len(refunds))
	}
}

// An order refunded while it is being produced (the operator's refund, whose cancel the
// job has not yet heard) is not delivered as well: the job stops at the row.
func TestOrderRefundedDuringProductionIsNotDelivered(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co, release := f.producing(t, "Refunded while spoken.")
	// As the operator's refund does: a claim, then the order failed under it.
	claim, _, err := f.book.fulfil.fence.claim(ctx, co.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.book.fulfil.fence.failFenced(ctx, co.OrderID, claim, "operator_refund"); !ok || err != nil {
		t.Fatalf("failing the order: %v, %v", ok, err)
	}
	release()
	if !testkit.WaitFor(10*time.Second, func() bool { return f.jobState(t) == "completed" }) {
		t.Fatalf("the job is %s", f.jobState(t))
	}
	o, _ := f.book.orders.Get(ctx, co.OrderID)
	// Failed, or already refunded by its refund job (whose letter, the refund's news, may
	// have gone by now): never done, no result, no letter with a link.
	if (o.Status != Failed && o.Status != Refunded) || o.ResultKey != "" || !o.DoneAt.IsZero() {
		t.Errorf("order %s, result %q, done %v; want failed or refunded, nothing delivered", o.Status, o.ResultKey, o.DoneAt)
	}
	for _, m := range f.mails(t) {
		if strings.Contains(m, "http://parla.test"+testRoutes.Page) || strings.Contains(m, "http://parla.test"+testRoutes.Download) {
			t.Errorf("a letter with a link to the result went out:\n%s", m)
		}
	}
}
