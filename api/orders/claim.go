package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"parla/providers"
)

// Exactly once. A paid order's effects (its stored result, its letter, the state the
// visitor sees) happen at most once, whatever node runs it and however often:
//
//   - A runner starting or taking over an order takes a claim on its row (claim: a number
//     incremented in one statement). Every write of the run that matters names the claim in
//     its WHERE clause: progress, the result key, finishing, the letter's claim. A runner
//     that lost the order (another node took it over while this one was frozen) finds its
//     writes refused and ends its job without a retry.
//   - The database cannot fence object writes, so a claim writes its objects under a key of
//     its own (results/<order>/<claim>/…) and the fenced update chooses which key the order
//     points to. A loser removes its own objects, never the winner's; the sweep removes
//     what a crashed loser left (orphans).
//   - A runner fences itself too: before every engine process it checks its node's lease
//     (the last successful heartbeat, on the monotonic clock, younger than leaseFor), so a
//     node resumed after a freeze starts nothing new.
//   - A deletion sticks: "Delete now", the expiry and a refund mark the row (erased, or a
//     final status) before removing files, and every later write checks the mark.

// ErrClaimLost is returned (wrapped) by a runner whose claim on its order was taken by
// another, or whose order was refunded or erased meanwhile: it ends without a retry.
var ErrClaimLost = errors.New("the order is no longer this runner's")

// errLeaseLapsed is returned by the process gate of a node whose heartbeat is not recent.
var errLeaseLapsed = errors.New("this node's heartbeat lease has lapsed")

// claim takes a new claim on a paid order for this run and marks it processing; ErrClaimLost
// when the order is past that (delivered, refunded, erased).
func (j *jobRows) claim(ctx context.Context, id string) (int64, error) {
	var c int64
	err := j.db.QueryRowContext(ctx, `UPDATE orders SET status = ?, claim = claim + 1, claimed_by = ?
		WHERE id = ? AND status IN (?, ?) AND erased = 0 RETURNING claim`, Processing, j.node, id, Paid, Processing).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("claiming order %s: %w", id, ErrClaimLost)
	}
	if err != nil {
		return 0, fmt.Errorf("claiming order %s: %w", id, err)
	}
	return c, nil
}

// holds tells whether claim is still the order's and the order still running.
func (j *jobRows) holds(ctx context.Context, id string, claim int64) (bool, error) {
	var n int64
	err := j.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM orders WHERE id = ? AND claim = ? AND status = ? AND erased = 0`,
		id, claim, Processing).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("checking the claim on order %s: %w", id, err)
	}
	return n > 0, nil
}

// setProgressFenced records progress (0–100) of a running order, for the holder of claim.
func (j *jobRows) setProgressFenced(ctx context.Context, id string, claim int64, percent int) error {
	percent = min(max(percent, 0), 100)
	return execRow(ctx, j.db, "recording progress of order "+id,
		`UPDATE orders SET progress = ? WHERE id = ? AND status = ? AND claim = ?`, percent, id, Processing, claim)
}

// setResultFenced records the stored result and its download link, for the holder of
// claim, on an order still running and not erased; false when refused. It keeps an
// existing link, so a repeated step never hands out a second one.
func (j *jobRows) setResultFenced(ctx context.Context, id string, claim int64, key, name, token string, expires time.Time) (bool, error) {
	return execChanged(ctx, j.db, "recording result of order "+id,
		`UPDATE orders SET result_key = ?, result_name = ?,
		   link_token = COALESCE(link_token, ?),
		   link_expires_at = CASE WHEN link_expires_at = 0 THEN ? ELSE link_expires_at END,
		   progress = 100
		 WHERE id = ? AND claim = ? AND status = ? AND erased = 0`, key, name, token, millis(expires), id, claim, Processing)
}

// finishFenced marks an order done and erases its parameters (the visitor's text), for
// the holder of claim; false when refused.
func (j *jobRows) finishFenced(ctx context.Context, id string, claim int64, at time.Time) (bool, error) {
	return execChanged(ctx, j.db, "finishing order "+id,
		`UPDATE orders SET status = ?, done_at = ?, params = '{}', progress = 100
		 WHERE id = ? AND claim = ? AND status = ?`, Done, millis(at), id, claim, Processing)
}

// failFenced marks a running order failed (a refund follows), for the holder of claim;
// false when refused: a runner that lost the order must not fail what another delivers.
func (j *jobRows) failFenced(ctx context.Context, id string, claim int64, reason string) (bool, error) {
	return execChanged(ctx, j.db, "failing order "+id,
		`UPDATE orders SET status = ?, error = ? WHERE id = ? AND claim = ? AND status IN (?, ?)`,
		Failed, reason, id, claim, Paid, Processing)
}

// finishUnmailedFenced marks done an order whose result is stored but whose letter could
// not be sent (the link is on the confirmation page), for the holder of claim; false when
// refused.
func (j *jobRows) finishUnmailedFenced(ctx context.Context, id string, claim int64, at time.Time) (bool, error) {
	return execChanged(ctx, j.db, "finishing order "+id,
		`UPDATE orders SET status = ?, done_at = ?, mailed_at = ?, email = '', params = '{}', progress = 100
		 WHERE id = ? AND claim = ? AND status IN (?, ?) AND result_key != ''`, Done, millis(at), millis(at), id, claim, Paid, Processing)
}

// claimLetter claims the sending of the order's letter before it is sent, for the holder
// of claim (claim < 0: the refund, which no runner holds): false when it was claimed or
// sent before. A crash between the claim and the send leaves it unsent (the operator's
// Resend is the remedy); a send that fails gives the claim back (unclaimLetter).
func (j *jobRows) claimLetter(ctx context.Context, id string, claim int64, at time.Time) (bool, error) {
	return execChanged(ctx, j.db, "claiming the letter of order "+id,
		`UPDATE orders SET mail_claimed_at = ?
		 WHERE id = ? AND mail_claimed_at = 0 AND mailed_at = 0 AND (claim = ? OR ? < 0)`, millis(at), id, claim, claim)
}

// unclaimLetter gives back the claim of a letter whose send failed, so a retry sends it.
func (j *jobRows) unclaimLetter(ctx context.Context, id string) error {
	return execRow(ctx, j.db, "giving back the letter of order "+id,
		`UPDATE orders SET mail_claimed_at = 0 WHERE id = ? AND mailed_at = 0`, id)
}

// claimPrefix is where the claim's objects of an order live.
func claimPrefix(id string, claim int64) string {
	return "results/" + id + "/" + strconv.FormatInt(claim, 10) + "/"
}

// recordEdit records a save of the visitor's edit, in the statement that checks the
// result is still the one the visitor edits and not erased: false when it is gone.
func (s *Store) recordEdit(ctx context.Context, id, resultKey string) (bool, error) {
	return execChanged(ctx, s.db, "recording an edit of order "+id,
		`UPDATE orders SET edits = edits + 1 WHERE id = ? AND result_key = ? AND result_key != '' AND erased = 0`, id, resultKey)
}

// stillServes tells whether the order still serves resultKey (not erased, not expired).
func (s *Store) stillServes(ctx context.Context, id, resultKey string) (bool, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM orders WHERE id = ? AND result_key = ? AND erased = 0`,
		id, resultKey).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("checking order %s: %w", id, err)
	}
	return n > 0, nil
}

// markErased marks an order's result erased for good before its files go: no later write
// (a save, a resumed runner's result) can bring it back.
func (s *Store) markErased(ctx context.Context, id string) error {
	return execRow(ctx, s.db, "erasing result of order "+id,
		`UPDATE orders SET erased = 1, result_key = '', status = CASE WHEN status = ? THEN ? ELSE status END WHERE id = ?`,
		Done, Expired, id)
}

// storedOrder is what the orphan sweep needs of an order.
type storedOrder struct {
	status    Status
	resultKey string
	claim     int64
	erased    bool
}

// stored reads what the orphan sweep needs of an order; found is false when it is gone.
func (s *Store) stored(ctx context.Context, id string) (o storedOrder, found bool, err error) {
	var erased int64
	err = s.db.QueryRowContext(ctx, `SELECT status, result_key, claim, erased FROM orders WHERE id = ?`, id).
		Scan(&o.status, &o.resultKey, &o.claim, &erased)
	if errors.Is(err, sql.ErrNoRows) {
		return o, false, nil
	}
	if err != nil {
		return o, false, fmt.Errorf("loading order %s: %w", id, err)
	}
	o.erased = erased != 0
	return o, true, nil
}

// deletePrefix removes every object under prefix; with a storage that cannot list, the
// keys named in known. Missing objects are no error.
func deletePrefix(ctx context.Context, s providers.Storage, prefix string, known ...string) error {
	keys := known
	if l, ok := s.(providers.KeyLister); ok {
		listed, err := l.Keys(ctx, prefix)
		if err != nil {
			return err
		}
		keys = append(keys, listed...)
	}
	var errs []error
	for _, key := range keys {
		if err := s.Delete(ctx, key); err != nil && !errors.Is(err, providers.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// eraseFiles removes every object of an order: its result, what is kept with it, the
// visitor's edit, and whatever a runner of any claim stored.
func eraseFiles(ctx context.Context, s providers.Storage, id, resultKey string) error {
	var err error
	if resultKey != "" {
		err = deleteResult(ctx, s, resultKey)
	}
	return errors.Join(err, deletePrefix(ctx, s, "results/"+id+"/"))
}

// orphans removes the objects under results/ that no order serves: those of an order that
// is gone, erased, expired, failed or refunded, and those a claim that lost its order left
// (a directory that is neither the order's result's nor its current claim's).
func (s *sweeper) orphans(ctx context.Context) (int, error) {
	l, ok := s.storage.(providers.KeyLister)
	if !ok {
		return 0, nil
	}
	keys, err := l.Keys(ctx, "results/")
	if err != nil {
		return 0, err
	}
	cache := map[string]*storedOrder{}
	var errs []error
	n := 0
	for _, key := range keys {
		rest := strings.TrimPrefix(key, "results/")
		id, _, ok := strings.Cut(rest, "/")
		if !ok || id == "" {
			continue
		}
		o, seen := cache[id]
		if !seen {
			so, found, err := s.orders.stored(ctx, id)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if found {
				o = &so
			}
			cache[id] = o
		}
		if !orphan(o, id, key) {
			continue
		}
		if err := s.storage.Delete(ctx, key); err != nil && !errors.Is(err, providers.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// orphan tells whether the object at key, under the order id (nil: gone), is served by
// no one and written by no live claim.
func orphan(o *storedOrder, id, key string) bool {
	if o == nil || o.erased {
		return true
	}
	switch o.status {
	case Expired, Failed, Refunded:
		return true
	case AwaitingPayment:
		return true
	}
	dir := path.Dir(key) + "/"
	if o.resultKey != "" && dir == path.Dir(o.resultKey)+"/" {
		return false
	}
	if dir == "results/"+id+"/" {
		return false // a result stored before claims, still being made or served
	}
	return dir != claimPrefix(id, o.claim)
}

// lease is a node's right to start engine processes: its last successful heartbeat on
// the monotonic clock, valid for leaseFor. Another node judges this one dead only after
// nodeDeadAfter without a beat, so a runner whose lease is valid still holds its orders.
type lease struct {
	mu    sync.Mutex
	last  time.Time
	valid time.Duration
	// epoch counts the lapses: a beat that comes valid or more after the one before it
	// starts a new epoch. A run holds the epoch it started in, so a node resumed after a
	// freeze starts nothing for the runs it had, even once it beats again.
	epoch int64
}

// leaseMargin is how long before another node may judge this one dead its lease ends: a
// heartbeat's worth for the beat's own round trip and a process start.
func leaseFor(heartbeat, deadAfter time.Duration) time.Duration {
	return deadAfter - 2*heartbeat
}

// renew records a successful heartbeat that was sent at sent.
func (l *lease) renew(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sent.After(l.last) {
		if !l.last.IsZero() && sent.Sub(l.last) >= l.valid {
			l.epoch++
		}
		l.last = sent
	}
}

// current returns the lease's epoch, for a run starting now.
func (l *lease) current() int64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// checkRun is check for a run that started in epoch: it fails too once the lease lapsed
// since, whether or not the node beats again.
func (l *lease) checkRun(epoch int64) error {
	if l == nil {
		return nil
	}
	if err := l.check(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch != epoch || time.Since(l.last) >= l.valid {
		return errLeaseLapsed
	}
	return nil
}

// check returns errLeaseLapsed when the last beat is older than the lease.
func (l *lease) check() error {
	if l == nil {
		return nil // one process on SQLite: nobody else takes its orders
	}
	l.mu.Lock()
	last := l.last
	l.mu.Unlock()
	if last.IsZero() || time.Since(last) >= l.valid {
		return errLeaseLapsed
	}
	return nil
}
