package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"parla/media"
	"parla/providers"
	"parla/providers/transcript"
)

// FulfilArgs is the one job that produces and delivers a paid order.
type FulfilArgs struct {
	OrderID string `json:"order_id"`
}

// Kind names the job in River's table.
func (FulfilArgs) Kind() string { return "fulfil" }

// InsertOpts makes the job unique per order for good: a second insert, from the webhook
// and the confirmation page racing, is a no-op even after the first job completed.
func (FulfilArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// RefundArgs refunds an order whose fulfilment failed for good and tells the visitor.
type RefundArgs struct {
	OrderID string `json:"order_id"`
}

// Kind names the job in River's table.
func (RefundArgs) Kind() string { return "refund" }

// InsertOpts makes the refund unique per order.
func (RefundArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// SweepArgs runs the periodic sweep.
type SweepArgs struct{}

// Kind names the job in River's table.
func (SweepArgs) Kind() string { return "sweep" }

// doublingRetry waits base, 2×base, 4×base… (capped at an hour) between attempts.
type doublingRetry struct {
	base time.Duration
	now  func() time.Time
}

func (r doublingRetry) NextRetry(job *rivertype.JobRow) time.Time {
	d := r.base
	for i := 1; i < job.Attempt && d < time.Hour; i++ {
		d *= 2
	}
	return time.Now().Add(min(d, time.Hour))
}

type fulfilWorker struct {
	river.WorkerDefaults[FulfilArgs]
	book *Book
}

func (w *fulfilWorker) Work(ctx context.Context, job *river.Job[FulfilArgs]) error {
	err := w.book.fulfil(ctx, job.Args.OrderID)
	if err == nil {
		return nil
	}
	return w.retryOrGiveUp(ctx, job, err)
}

// retryOrGiveUp lets River retry a failed fulfilment, or refunds the order when the
// failure is permanent or the last attempt failed.
func (w *fulfilWorker) retryOrGiveUp(ctx context.Context, job *river.Job[FulfilArgs], err error) error {
	log := w.book.log.With("order", job.Args.OrderID, "attempt", job.Attempt)
	var pe *permanentError
	if errors.As(err, &pe) {
		log.Error("fulfilment cannot succeed, refunding", "err", err)
		return w.book.giveUp(context.WithoutCancel(ctx), job.Args.OrderID, err)
	}
	if job.Attempt < job.MaxAttempts && ctx.Err() == nil {
		log.Warn("fulfilment failed, will retry", "err", err)
		return err
	}
	if ctx.Err() != nil && job.Attempt < job.MaxAttempts {
		return err // shutting down: the job goes back to the queue
	}
	log.Error("fulfilment failed for good, refunding", "err", err)
	return w.book.giveUp(context.WithoutCancel(ctx), job.Args.OrderID, err)
}

// fulfil runs every step of a paid order; each step checks the row first, so a repeated
// job resumes where the last one stopped.
func (b *Book) fulfil(ctx context.Context, id string) error {
	o, err := b.store.Get(ctx, id)
	if err != nil {
		return err
	}
	switch o.Status {
	case Done, Failed, Refunded, Expired:
		return nil
	case AwaitingPayment:
		return river.JobCancel(fmt.Errorf("order %s is not paid", id))
	}
	if err := b.store.StartProcessing(ctx, id); err != nil {
		return err
	}
	log := b.log.With("order", id)
	if o.ResultKey == "" {
		started := b.cfg.Now()
		key, name, err := b.produce(ctx, o)
		if err != nil {
			return fmt.Errorf("producing order %s: %w", id, err)
		}
		if err := b.store.SetResult(ctx, id, key, name, randomString(24), b.cfg.Now().Add(b.cfg.LinkTTL)); err != nil {
			return err
		}
		log.Info("result stored", "took", time.Since(started).Round(time.Millisecond))
		if o, err = b.store.Get(ctx, id); err != nil {
			return err
		}
	}
	if o.MailedAt.IsZero() {
		if err := b.mail(ctx, o, true); err != nil {
			return err
		}
	}
	b.releaseInputs(ctx, o)
	if err := b.store.Finish(ctx, id, b.cfg.Now()); err != nil {
		return err
	}
	log.Info("order delivered")
	return nil
}

func (b *Book) mail(ctx context.Context, o Order, delivered bool) error {
	if o.Email == "" {
		return nil
	}
	var msg providers.Message
	var err error
	if delivered {
		msg, err = b.deps.Letters.Delivered(o, b.Link(o))
	} else {
		msg, err = b.deps.Letters.Refunded(o)
	}
	if err != nil {
		return fmt.Errorf("writing message for order %s: %w", o.ID, err)
	}
	msg.To = o.Email
	if err := b.deps.Mailer.Send(ctx, msg); err != nil {
		return fmt.Errorf("mailing order %s: %w", o.ID, err)
	}
	return b.store.MarkMailed(ctx, o.ID, b.cfg.Now())
}

// giveUp ends an order that cannot be fulfilled. If the result exists and only the
// message failed, the visitor still has the link on the confirmation page, so the order
// is finished rather than refunded.
func (b *Book) giveUp(ctx context.Context, id string, cause error) error {
	o, err := b.store.Get(ctx, id)
	if err != nil {
		return err
	}
	if o.ResultKey != "" {
		b.releaseInputs(ctx, o)
		if err := b.store.MarkMailed(ctx, id, b.cfg.Now()); err != nil {
			return err
		}
		return b.store.Finish(ctx, id, b.cfg.Now())
	}
	reason := "production_failed"
	var pe *permanentError
	if errors.As(cause, &pe) {
		reason = pe.reason
	}
	if err := b.store.MarkFailed(ctx, id, reason); err != nil {
		return err
	}
	if _, err := b.queue.Insert(ctx, RefundArgs{OrderID: id}, nil); err != nil {
		return fmt.Errorf("queueing refund of order %s after %v: %w", id, cause, err)
	}
	return nil
}

// produce makes the order's result and stores it, returning its key and file name.
func (b *Book) produce(ctx context.Context, o Order) (key, name string, err error) {
	tmp, err := os.CreateTemp(b.cfg.TempDir, string(o.Service)+"-"+o.ID+"-*")
	if err != nil {
		return "", "", fmt.Errorf("creating scratch file: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()

	progress := b.progressRecorder(ctx, o.ID)
	defer progress.close()
	var kind resultKind
	switch o.Service {
	case TTS:
		kind, err = b.speak(ctx, o, tmp, progress)
	case STT, VTT:
		kind, err = b.transcribe(ctx, o, tmp, progress)
	default:
		err = fmt.Errorf("unknown service %q", o.Service)
	}
	if err != nil {
		return "", "", err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return "", "", fmt.Errorf("measuring result: %w", err)
	}
	if size == 0 {
		return "", "", errors.New("engine produced an empty file")
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return "", "", fmt.Errorf("rewinding result: %w", err)
	}
	name = fmt.Sprintf("parla-%s-%s.%s", kind.name, strings.ToLower(o.ID[:8]), kind.ext)
	key = "results/" + o.ID + "/" + name
	if err := b.deps.Storage.Put(ctx, key, tmp, size, kind.contentType); err != nil {
		return "", "", fmt.Errorf("storing result: %w", err)
	}
	return key, name, nil
}

// resultKind names a result file: parla-<name>-<id>.<ext>, served as contentType.
type resultKind struct{ name, ext, contentType string }

// speak produces a text-to-speech order's audio into w.
func (b *Book) speak(ctx context.Context, o Order, w io.Writer, progress *progressRecorder) (resultKind, error) {
	var p TTSParams
	if err := json.Unmarshal(o.Params, &p); err != nil {
		return resultKind{}, fmt.Errorf("decoding parameters: %w", err)
	}
	if err := b.deps.Speaker.Available(); err != nil {
		return resultKind{}, err
	}
	format, ok := media.Format(p.Format)
	if !ok {
		return resultKind{}, fmt.Errorf("unknown format %q", p.Format)
	}
	err := b.deps.Speaker.Speak(ctx, providers.SpeechRequest{
		Voice: p.Voice, Text: p.Text, Format: p.Format, Speed: p.Speed,
		Progress: func(pct int) { progress.set(pct * 95 / 100) },
	}, w)
	// The extension is the container's (aac is delivered as .m4a), not the format's name.
	return resultKind{"speech", format.Ext, format.ContentType}, err
}

// progressRecorder writes an order's progress to the store without blocking the engine:
// it keeps only the latest value and writes at most every 250 ms.
type progressRecorder struct {
	mu      sync.Mutex
	latest  int
	written int
	wake    chan struct{}
	done    chan struct{}
	stopped sync.WaitGroup
}

func (b *Book) progressRecorder(ctx context.Context, id string) *progressRecorder {
	p := &progressRecorder{wake: make(chan struct{}, 1), done: make(chan struct{}), written: -1}
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			p.mu.Lock()
			v := p.latest
			changed := v != p.written
			p.written = v
			p.mu.Unlock()
			if changed {
				if err := b.store.SetProgress(ctx, id, v); err != nil {
					b.log.Warn("recording progress", "order", id, "err", err)
				}
			}
		}
	}()
	return p
}

func (p *progressRecorder) set(pct int) {
	p.mu.Lock()
	p.latest = max(p.latest, pct)
	p.mu.Unlock()
}

func (p *progressRecorder) current() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latest
}

func (p *progressRecorder) close() {
	close(p.done)
	p.stopped.Wait()
}

type refundWorker struct {
	river.WorkerDefaults[RefundArgs]
	book *Book
}

func (w *refundWorker) Work(ctx context.Context, job *river.Job[RefundArgs]) error {
	return w.book.refund(ctx, job.Args.OrderID, job.Attempt >= job.MaxAttempts)
}

// refund returns the money (idempotent per order at the provider), tells the visitor and
// erases what they gave us. On the last attempt a message that cannot be sent no longer
// holds the order back: the money is back either way.
func (b *Book) refund(ctx context.Context, id string, lastAttempt bool) error {
	o, err := b.store.Get(ctx, id)
	if err != nil {
		return err
	}
	if o.Status == Refunded {
		return nil
	}
	if o.PaymentIntent != "" {
		if err := b.deps.Payments.Refund(ctx, o.PaymentIntent, "refund-"+o.ID); err != nil {
			return fmt.Errorf("refunding order %s: %w", id, err)
		}
	}
	if o.MailedAt.IsZero() {
		if err := b.mail(ctx, o, false); err != nil {
			b.log.Warn("telling the visitor about the refund", "order", id, "err", err)
			if !lastAttempt {
				return err
			}
		}
	}
	b.releaseInputs(ctx, o)
	if err := b.store.MarkRefunded(ctx, id); err != nil {
		return err
	}
	b.log.Info("order refunded", "order", id)
	return nil
}

type sweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	book *Book
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[SweepArgs]) error {
	_, err := w.book.Sweep(ctx)
	return err
}

// SweepReport counts what one sweep removed.
type SweepReport struct {
	Results      int // expired results deleted from storage
	Unpaid       int // unpaid orders expired
	ScratchFiles int // leftover scratch files deleted
	Uploads      int // unpaid uploads deleted
}

// Sweep deletes expired results, expires stale unpaid orders and removes leftover
// scratch files, judged by the book's clock.
func (b *Book) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	now := b.cfg.Now()
	expired, err := b.store.ExpiredResults(ctx, now)
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, o := range expired {
		if err := b.deps.Storage.Delete(ctx, o.ResultKey); err != nil && !errors.Is(err, providers.ErrNotFound) {
			errs = append(errs, fmt.Errorf("deleting result of order %s: %w", o.ID, err))
			continue
		}
		if err := b.store.DropResult(ctx, o.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		rep.Results++
	}
	unpaid, err := b.store.StaleUnpaid(ctx, now.Add(-b.cfg.UnpaidTTL))
	if err != nil {
		return rep, err
	}
	for _, o := range unpaid {
		if ok, err := b.store.Expire(ctx, o.ID); err != nil {
			errs = append(errs, err)
		} else if ok {
			rep.Unpaid++
		}
	}
	if rep.Uploads, err = b.sweepUploads(ctx, now.Add(-b.cfg.UploadTTL)); err != nil {
		errs = append(errs, err)
	}
	n, err := sweepDir(b.cfg.TempDir, now.Add(-b.cfg.TempTTL))
	rep.ScratchFiles = n
	if err != nil {
		errs = append(errs, err)
	}
	if err := b.store.DeleteEventsBefore(ctx, now.Add(-7*24*time.Hour)); err != nil {
		errs = append(errs, err)
	}
	if rep != (SweepReport{}) {
		b.log.Info("swept", "results", rep.Results, "unpaid", rep.Unpaid, "scratch", rep.ScratchFiles, "uploads", rep.Uploads)
	}
	return rep, errors.Join(errs...)
}

// sweepDir deletes regular files in dir last modified before cutoff.
func sweepDir(dir string, cutoff time.Time) (int, error) {
	if dir == "" {
		return 0, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("sweeping %s: %w", dir, err)
	}
	n := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
			n++
		}
	}
	return n, nil
}

// ContentType is the MIME type of a result file, judged by its extension.
func ContentType(name string) string {
	ext := strings.TrimPrefix(filepath.Ext(name), ".")
	for _, f := range providers.SpeechFormats {
		if info, ok := media.Format(f); ok && info.Ext == ext {
			return info.ContentType
		}
	}
	for _, f := range providers.TranscriptFormats {
		if e, contentType, ok := transcript.Info(f); ok && e == "."+ext {
			return contentType
		}
	}
	return "application/octet-stream"
}
