package moneysim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parla/api/credit"
	"parla/api/orders"
	"parla/providers"
	"parla/providers/mail"
	"parla/providers/sqldb"
	"parla/providers/storage"
	"parla/providers/stripe"
	"parla/providers/testkit"
)

// clock is the simulation's time: the book's and the ledger's Now, moved only by the
// simulation's clock jumps.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fault is what the next calls of a faulty part do: each takes the next fate of the list,
// and works once it is empty.
type fault struct {
	mu    sync.Mutex
	fates []string
}

// set makes the next n calls fail as kind (and any fates set before are dropped).
func (f *fault) set(n int, kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fates = nil
	for range n {
		f.fates = append(f.fates, kind)
	}
}

// then makes one more call, after those set, fail as kind.
func (f *fault) then(kind string) { f.mu.Lock(); defer f.mu.Unlock(); f.fates = append(f.fates, kind) }

// next takes one call's fate: "" (works) or its fault's kind.
func (f *fault) next() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.fates) == 0 {
		return ""
	}
	kind := f.fates[0]
	f.fates = f.fates[1:]
	return kind
}

// The ways a provider's call fails: refused before anything happened (certainly not done),
// no answer before it reached the provider, or no answer after the provider did it.
const (
	refused       = "refused"
	unknownBefore = "unknown-before"
	unknownAfter  = "unknown-after"
)

var errTimeout = errors.New("the provider did not answer in time")

// payments is the test checkout behind an outage switch for refunds. The checkout itself
// keeps every refund call it receives and fails a second refund of a payment under another
// key (stripe.ErrRefundedTwice) rather than absorbing it.
type payments struct {
	*stripe.TestCheckout
	fault fault
}

var _ providers.PartRefunder = (*payments)(nil)

func (p *payments) Refund(ctx context.Context, intent, key string) error {
	return p.RefundPart(ctx, intent, 0, key)
}

func (p *payments) RefundPart(ctx context.Context, intent string, part int64, key string) error {
	kind := p.fault.next()
	switch kind {
	case refused:
		return fmt.Errorf("refunding %s: %w: the provider is down", intent, providers.ErrNotRefunded)
	case unknownBefore:
		return fmt.Errorf("refunding %s: %w", intent, errTimeout)
	}
	if err := p.TestCheckout.RefundPart(ctx, intent, part, key); err != nil || kind == "" {
		return err
	}
	return fmt.Errorf("refunding %s: %w", intent, errTimeout) // done, and the answer lost
}

// mailer counts every letter that left (sent, or left with its answer lost), by Message-ID
// (one per order and purpose, one per key), behind a fault switch.
type mailer struct {
	out   providers.Mailer
	fault fault
	mu    sync.Mutex
	sent  map[string]int
}

func (m *mailer) Send(ctx context.Context, msg providers.Message) error {
	kind := m.fault.next()
	if kind == refused {
		return fmt.Errorf("sending %s: %w: the server refused it", msg.ID, providers.ErrNotSent)
	}
	if kind == unknownBefore {
		return fmt.Errorf("sending %s: %w", msg.ID, errTimeout)
	}
	if err := m.out.Send(ctx, msg); err != nil {
		return err
	}
	m.mu.Lock()
	m.sent[msg.ID]++
	m.mu.Unlock()
	if kind == unknownAfter {
		return fmt.Errorf("sending %s: %w", msg.ID, errTimeout)
	}
	return nil
}

func (m *mailer) count(id string) int { m.mu.Lock(); defer m.mu.Unlock(); return m.sent[id] }

// hang is an engine's call that works until its run is stopped.
const hang = "hang"

// speaker is a fast engine that fails while its fault says so; hanging tells that a call
// is working until its run is stopped.
type speaker struct {
	fault   fault
	hanging atomic.Bool
}

func (s *speaker) Available() error { return nil }

func (s *speaker) Speak(ctx context.Context, req providers.SpeechRequest, w io.Writer) error {
	switch s.fault.next() {
	case "":
	case hang:
		s.hanging.Store(true)
		defer s.hanging.Store(false)
		<-ctx.Done() // working until its run is stopped
		return ctx.Err()
	default:
		return errors.New("engine exploded")
	}
	_, err := io.WriteString(w, "ID3 fake audio for "+req.Voice)
	return err
}

// world is one database with a node on it (the real order book and credit, as wire.go
// builds them) and the fakes around them; the seeds run one after another on it, each on
// orders and keys of its own. A node killed is replaced by a new one, as a restart does.
type world struct {
	db      *sqldb.DB
	clock   *clock
	pay     *payments
	mail    *mailer
	speaker *speaker
	cfg     orders.Config
	deps    orders.Deps
	book    *orders.Book
	credit  *credit.Credit
	stop    context.CancelFunc
}

// The book's bounds: short where the queue's real time counts (its retries, its polling),
// the product's where the simulated clock counts them.
const (
	maxAttempts       = 3
	jobTimeout        = 2 * time.Hour
	reconcileInterval = time.Hour
)

func newWorld(t *testing.T) *world {
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
	outbox, err := mail.NewOutbox(filepath.Join(dir, "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	tmp, uploads := filepath.Join(dir, "tmp"), filepath.Join(dir, "uploads")
	for _, d := range []string{tmp, uploads} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := &world{db: db, clock: clk, pay: &payments{TestCheckout: tc},
		mail: &mailer{out: outbox, sent: map[string]int{}}, speaker: &speaker{}}
	w.cfg = orders.Config{PublicURL: "http://parla.test", Routes: routes, TempDir: tmp, UploadDir: uploads, Now: clk.Now,
		TTS:       orders.TTSLimits{Voices: providers.Voices, Formats: providers.SpeechFormats, MinSpeed: 0.25, MaxSpeed: 4, MaxChars: 5000},
		RetryBase: time.Millisecond, MaxAttempts: maxAttempts, PollInterval: 10 * time.Millisecond,
		JobTimeout: jobTimeout, SweepInterval: time.Hour, ReconcileInterval: reconcileInterval,
		// The credit's step, as wire.go appends it: the holds of processes not alive.
		Reconcilers: []orders.Reconciler{{Name: "holds", Run: w.releaseDead}}}
	w.deps = orders.Deps{DB: db, Payments: w.pay, Storage: files, Mailer: w.mail, Letters: orders.MailLetters{},
		Speaker: w.speaker, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := w.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.halt(10 * time.Second) })
	return w
}

// start boots a node: the book and the credit, wired as wire.go wires them, the queue
// started.
func (w *world) start() error {
	ctx := context.Background()
	book, err := orders.New(ctx, w.cfg, w.deps)
	if err != nil {
		return err
	}
	c, err := credit.New(ctx, credit.Config{PublicURL: "http://parla.test", Page: "/api", Success: "/api-payment/success",
		Now: w.clock.Now, Holder: book.Holder()}, credit.Deps{DB: w.db, Payments: w.pay, Mailer: w.mail, Log: w.deps.Log})
	if err != nil {
		return err
	}
	book.Cashier.OtherSessions = c.Shop.HandleEvent
	run, cancel := context.WithCancel(context.Background())
	if err := book.Start(run); err != nil {
		cancel()
		return err
	}
	w.book, w.credit, w.stop = book, c, cancel
	return nil
}

// halt stops the node, its runs given grace long to end (then cancelled, as a kill's
// SIGTERM and its deadline do).
func (w *world) halt(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := w.book.Stop(ctx)
	w.stop()
	return err
}

// restart replaces the node with a new process on the same database.
func (w *world) restart(grace time.Duration) error {
	return errors.Join(w.halt(grace), w.start())
}

// releaseDead is the credit's step of the reconciler (wire.go's): the holds of processes
// not alive are given back.
func (w *world) releaseDead(ctx context.Context) (int, error) {
	live, err := w.book.LiveHolders(ctx)
	if err != nil {
		return 0, err
	}
	return w.credit.Ledger.ReleaseDead(ctx, live)
}

// routes are the site's addresses as api gives them (api.OrderRoutes).
var routes = orders.Routes{
	Success:  map[orders.Service]string{orders.TTS: "/payment/success"},
	Cancel:   map[orders.Service]string{orders.TTS: "/tts"},
	Download: "/d/", Page: "/r/",
}

// periodic runs the sweep and the reconciler now, as the queue's periodic jobs do, and
// says what they did.
func (w *world) periodic(ctx context.Context) string {
	_, err := w.book.Sweep(ctx)
	moved, rerr := w.book.Reconcile(ctx)
	return fmt.Sprintf("sweep: %s, reconciled %v: %s", outcome(err), moved, outcome(rerr))
}

// heal ends every fault: the end of a seed, when every state must find its exit.
func (w *world) heal() {
	w.pay.fault.set(0, "")
	w.mail.fault.set(0, "")
	w.speaker.fault.set(0, "")
}

// unfinished lists the order jobs River has yet to finish (a sweep job is not one).
func (w *world) unfinished(ctx context.Context) ([]string, error) {
	return sqldb.QueryAll(ctx, w.db, func(row sqldb.Scanner) (string, error) {
		var kind, state, order string
		var attempt int
		err := row.Scan(&kind, &state, &attempt, &order)
		return fmt.Sprintf("%s of %s %s (attempt %d)", kind, order, state, attempt), err
	}, `SELECT kind, state, attempt, `+w.db.Dialect.JSONText("args", "order_id")+` FROM river_job
		WHERE kind IN ('fulfil', 'refund') AND state IN ('available', 'pending', 'running', 'retryable', 'scheduled')`)
}

// drain waits until the queue has no order job left to run: River works in real time, so
// each step lets it finish what the step queued before the next, and a seed replays.
func (w *world) drain(ctx context.Context) error {
	var jobs []string
	var err error
	if !testkit.WaitEvery(5*time.Millisecond, 20*time.Second, func() bool {
		jobs, err = w.unfinished(ctx)
		return err != nil || len(jobs) == 0
	}) {
		return fmt.Errorf("jobs unfinished after %s: %v", testkit.Timeout(20*time.Second), jobs)
	}
	return err
}
