package orders

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"parla/api/orders/jobs"
	"parla/media"
	"parla/providers"
)

// Producer makes the result of one service's paid orders. The fulfiller knows the services
// only through it: text-to-speech (produce_tts.go) and transcripts of uploads and video
// links (produce_transcript.go).
type Producer interface {
	// Available reports nil when the service can take orders, or why it cannot.
	Available() error
	// Produce writes the order's result to w, reporting progress (0–100, not blocking), and
	// says what kind of file it is. A *permanentError (see permanent) refunds at once.
	Produce(ctx context.Context, o Order, w io.Writer, progress func(percent int)) (FileKind, error)
	// Release deletes what the visitor gave for the order once its job has ended.
	Release(ctx context.Context, o Order)
}

// FileKind names a result file: parla-<Name>-<id>.<Ext>, served as ContentType. A
// transcription also hands back its Transcript, kept next to the result for the link
// page's other formats.
type FileKind struct {
	Name, Ext, ContentType string
	Transcript             *providers.Transcript
	// Audio is how long the transcribed source or the spoken result is (0: unknown); the
	// engines' speed is measured against it.
	Audio time.Duration
}

// Letters renders the messages a visitor receives, in the order's locale.
type Letters interface {
	Delivered(o Order, link string) (providers.Message, error)
	Refunded(o Order) (providers.Message, error)
}

// permanentError is a fulfilment failure no retry can mend (the source changed, the upload
// is gone): the order is refunded at once, with reason as its client-safe error code.
type permanentError struct {
	reason string
	err    error
}

func (e *permanentError) Error() string { return e.reason + ": " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Final tells the queue to give the order up at once (jobs.Final).
func (e *permanentError) Final() bool { return true }

func permanent(reason string, err error) error { return &permanentError{reason, err} }

// refusedIsFinal makes an engine's refusal (providers.ErrRefused: the server refused the
// request itself, and will again) permanent, with the reason engine_refused; other errors
// pass as they are.
func refusedIsFinal(err error) error {
	var pe *permanentError
	if errors.Is(err, providers.ErrRefused) && !errors.As(err, &pe) {
		return permanent("engine_refused", err)
	}
	return err
}

// fulfiller runs the one job of a paid order: produce → store → link → e-mail → done, or,
// when that fails for good, refund and tell the visitor.
type fulfiller struct {
	cfg       Config
	orders    *Store
	fence     *fence
	erasure   *erasure
	producers map[Service]Producer
	storage   providers.Storage
	payments  providers.Payments
	mailer    providers.Mailer
	letters   Letters
	queue     *jobs.Queue
	observer  Observer
	// prober measures a spoken result for the engines' speed; nil: not measured.
	prober prober
	log    *slog.Logger
}

// prober reads a local media file's duration (media.Runner.Probe).
type prober interface {
	Probe(ctx context.Context, path string) (media.ProbeInfo, error)
}

var _ prober = (*media.Runner)(nil)

// fulfil runs every step of a paid order. It takes its claim first, then reads the order
// and decides: a run that starts as the previous one delivers finds the stored result and
// does not produce again. Each step checks the row, so a repeated job resumes where the
// last one stopped. alive is the node's lease for this run: it and the claim gate every
// engine process and call. A failure after the run took its claim carries it (runFailed),
// so giving the order up is fenced by the same claim.
func (f *fulfiller) fulfil(ctx context.Context, id string, alive func() error) (err error) {
	claim, runs, err := f.fence.claim(ctx, id)
	if errors.Is(err, ErrClaimLost) {
		return f.unclaimable(ctx, id, err)
	}
	if err != nil {
		return err
	}
	job := ctx
	defer func() {
		if err != nil && errors.Is(job.Err(), context.Canceled) {
			// Stopped by a shutdown: the run does not count against the order.
			if gerr := f.fence.giveBackRun(context.WithoutCancel(job), id, claim); gerr != nil {
				f.log.Warn("giving back a run stopped by a shutdown", "order", id, "err", gerr)
			}
		}
		err = withClaim(claim, err)
	}()
	o, err := f.orders.Get(ctx, id)
	if err != nil {
		return err
	}
	if runs > int64(f.cfg.MaxAttempts) {
		f.log.Error("an order's runs ended without a result too often (its node died each time?); giving it up",
			"order", id, "runs", runs-1)
		return permanent("production_failed", fmt.Errorf("%d runs of order %s ended without a result", runs-1, id))
	}
	ctx = media.WithProcessGate(ctx, f.gate(ctx, id, claim, alive))
	log := f.log.With("order", id, "claim", claim)
	if o.ResultKey == "" {
		deliver, err := f.makeResult(ctx, o, claim, log)
		if err != nil || !deliver {
			return err
		}
		if o, err = f.orders.Get(ctx, id); err != nil {
			return err
		}
	}
	if o.MailedAt.IsZero() {
		if err := f.mailOnce(ctx, o, claim, true); err != nil {
			return err
		}
		f.cfg.Checkpoint(id, "mailed")
	}
	f.release(ctx, o)
	if ok, err := f.fence.finishFenced(ctx, id, claim, f.cfg.Now()); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("finishing order %s: %w", id, ErrClaimLost)
	}
	f.cfg.Checkpoint(id, "finished")
	f.observer.Observe(Event{Kind: EventDelivered, Service: o.Service})
	log.Info("order delivered")
	return nil
}

// unclaimable is the end of a run that could not claim its order: nothing to do when it
// is past fulfilment (delivered, failed, refunded, expired), the job cancelled when it is
// not paid, else lost (erased, or another runner's).
func (f *fulfiller) unclaimable(ctx context.Context, id string, lost error) error {
	o, err := f.orders.Get(ctx, id)
	if err != nil {
		return err
	}
	switch o.Status {
	case Failed:
		// Given up by an earlier run, whose refund job may not have been queued (the
		// insert failed after the order was marked): queued here, once (unique while unfinished).
		return f.queue.Refund(ctx, id)
	case Done, Refunded, Expired:
		return nil
	case AwaitingPayment:
		return fmt.Errorf("order %s is not paid: %w", id, jobs.ErrCancel)
	}
	return lost
}

// gate is the run's process gate: before every engine process and call, its node's lease
// (alive) and its claim on the order must both hold. The lease is asked again after the
// claim's round trip, so the last word before a process starts is a local one: a node frozen
// while the database answered "held" (the answer waiting in its socket until it resumed)
// starts nothing, its lease having lapsed meanwhile.
func (f *fulfiller) gate(ctx context.Context, id string, claim int64, alive func() error) func() error {
	return func() error {
		if err := alive(); err != nil {
			return err
		}
		held, err := f.fence.holds(ctx, id, claim, Processing)
		if err != nil {
			return err
		}
		if !held {
			return fmt.Errorf("order %s: %w", id, ErrClaimLost)
		}
		return alive()
	}
}

// makeResult produces the order's result and records it for the run's claim; deliver is
// false when the order changed meanwhile (refunded, erased) and is not to be delivered.
func (f *fulfiller) makeResult(ctx context.Context, o Order, claim int64, log *slog.Logger) (deliver bool, err error) {
	id := o.ID
	f.cfg.Checkpoint(id, "producing")
	started := time.Now() // the work's own length, whatever clock the book runs on
	key, name, audio, err := f.produce(ctx, o, claim)
	produced := Event{Kind: EventProduced, Service: o.Service, Took: time.Since(started), Audio: audio}
	if err != nil {
		produced.Reason = "failed"
	}
	f.observer.Observe(produced)
	if err != nil {
		return false, f.lostOr(ctx, id, claim, fmt.Errorf("producing order %s: %w", id, err))
	}
	ok, err := f.fence.setResultFenced(ctx, id, claim, key, name, randomString(24), f.cfg.Now().Add(f.cfg.LinkTTL))
	if err != nil {
		return false, err
	}
	if !ok {
		// Taken over, refunded or erased while this run produced: what it stored goes.
		f.discard(ctx, id, claim)
		return false, f.ended(ctx, id, fmt.Errorf("storing the result of order %s: %w", id, ErrClaimLost))
	}
	log.Info("result stored", "took", time.Since(started).Round(time.Millisecond))
	f.cfg.Checkpoint(id, "stored")
	return true, nil
}

// lostOr returns err, or ErrClaimLost (and removes what this run stored) when the run
// failed because another runner took the order. A run that still holds it but whose gate
// is closed now (its node's lease lapsed) failed because the gate stopped an engine
// process, however the engine read that (an ffmpeg that could not start reads as a file
// that changed): the gate's error is returned, never a permanent one, so the order is
// retried, not refunded.
func (f *fulfiller) lostOr(ctx context.Context, id string, claim int64, err error) error {
	held, herr := f.fence.holds(context.WithoutCancel(ctx), id, claim, Processing)
	if herr != nil {
		return err
	}
	if held {
		if gerr := media.ProcessGate(ctx); gerr != nil {
			return fmt.Errorf("stopped by the process gate (%v): %w", err, gerr)
		}
		return err
	}
	f.discard(ctx, id, claim)
	return fmt.Errorf("%w (%v)", ErrClaimLost, err)
}

// ended is nil when the order was refunded or erased meanwhile (the job is over: the
// visitor is told that, not sent a link too), else lost, which ends the job without a
// retry (another runner holds the order).
func (f *fulfiller) ended(ctx context.Context, id string, lost error) error {
	o, err := f.orders.Get(ctx, id)
	if err == nil && o.Status != Processing && o.Status != Paid && o.Status != Done {
		f.log.Warn("order changed while it was produced; not delivering", "order", id, "status", o.Status)
		return nil
	}
	return lost
}

// discard removes the objects this claim stored: never another claim's.
func (f *fulfiller) discard(ctx context.Context, id string, claim int64) {
	if err := f.erasure.discard(context.WithoutCancel(ctx), id, claim); err != nil {
		f.log.Warn("removing what a run that lost its order stored", "order", id, "claim", claim, "err", err)
	}
}

// runFailed is a run's failure after it took its claim: giving the order up is fenced by
// that claim (giveUp), so a run that lost the order cannot fail or refund it.
type runFailed struct {
	claim int64
	err   error
}

func (e *runFailed) Error() string { return e.err.Error() }
func (e *runFailed) Unwrap() error { return e.err }

// withClaim marks err (nil stays nil) as a failure of the run that holds claim.
func withClaim(claim int64, err error) error {
	if err == nil {
		return nil
	}
	return &runFailed{claim, err}
}

// claimOf is the claim a run held when it failed with err; 0 when it took none.
func claimOf(err error) int64 {
	var rf *runFailed
	if errors.As(err, &rf) {
		return rf.claim
	}
	return 0
}

// produce makes the order's result through its service's producer and stores it,
// returning its key, file name and how long its audio is (0: unknown).
func (f *fulfiller) produce(ctx context.Context, o Order, claim int64) (key, name string, audio time.Duration, err error) {
	p, ok := f.producers[o.Service]
	if !ok {
		return "", "", 0, fmt.Errorf("no producer for service %q", o.Service)
	}
	if err := p.Available(); err != nil {
		return "", "", 0, err
	}
	tmp, err := os.CreateTemp(f.cfg.TempDir, string(o.Service)+"-"+o.ID+"-*")
	if err != nil {
		return "", "", 0, fmt.Errorf("creating scratch file: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	progress := newProgressRecorder(ctx, o.ID, claim, f.fence, stop, f.log)
	defer progress.close()
	kind, err := p.Produce(ctx, o, tmp, progress.set)
	if err != nil {
		return "", "", 0, refusedIsFinal(err)
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return "", "", 0, fmt.Errorf("measuring result: %w", err)
	}
	if size == 0 {
		return "", "", 0, errors.New("engine produced an empty file")
	}
	probed := f.measureAudio(ctx, o, kind, tmp.Name())
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return "", "", 0, fmt.Errorf("rewinding result: %w", err)
	}
	name = fmt.Sprintf("parla-%s-%s.%s", kind.Name, strings.ToLower(o.ID[:8]), kind.Ext)
	key = claimPrefix(o.ID, claim) + name // the fenced update chooses which claim's key is served
	err = f.storage.Put(ctx, key, tmp, size, kind.ContentType)
	kind.Audio = <-probed
	if err != nil {
		return "", "", 0, fmt.Errorf("storing result: %w", err)
	}
	if err := putKept(ctx, f.storage, key, keptOf(o, kind.Transcript)); err != nil {
		return "", "", 0, err
	}
	return key, name, kind.Audio, nil
}

// measureAudio returns how long the result at path lasts, for the engines' speed: what the
// producer said, or, for speech, what ffprobe reads in the file (0 when it cannot). The
// probe (a process start, about 0.25 s of CPU, up to a second on a busy machine) runs
// while the result is stored, not before it: the link waits for the longer of the two,
// not for both one after the other.
func (f *fulfiller) measureAudio(ctx context.Context, o Order, kind FileKind, path string) <-chan time.Duration {
	audio := make(chan time.Duration, 1)
	if kind.Audio != 0 || f.prober == nil || o.Service != TTS {
		audio <- kind.Audio
		return audio
	}
	go func() {
		info, err := f.prober.Probe(ctx, path)
		if err != nil {
			info.Duration = 0
		}
		audio <- info.Duration
	}()
	return audio
}

// release lets the order's producer delete what the visitor gave us.
func (f *fulfiller) release(ctx context.Context, o Order) {
	if p, ok := f.producers[o.Service]; ok {
		p.Release(ctx, o)
	}
}
