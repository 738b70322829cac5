package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"parla/api/orders/jobs"
	"parla/providers/sqldb"
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
//     (jobs.Handlers' alive: the last successful heartbeat, on the monotonic clock, recent
//     enough), so a node resumed after a freeze starts nothing new.
//   - A deletion sticks: "Delete now", the expiry and a refund mark the row (erased, or a
//     final status) before removing files, and every later write checks the mark.

// ErrClaimLost is returned (wrapped) by a runner whose claim on its order was taken by
// another, or whose order was refunded or erased meanwhile: its job ends without a retry
// (it wraps jobs.ErrCancel).
var ErrClaimLost = fmt.Errorf("the order is no longer this runner's (%w)", jobs.ErrCancel)

// fence is a run's transitions of its order: claimed and processing, progress, result and
// link, the letter's claim, mailed, done, failed, refunded. The run's own writes name its
// claim in their WHERE clause.
type fence struct {
	db   *sqldb.DB
	node string // this node's id, recorded with each claim
}

// MarkMailed records that the visitor was told and erases the address.
func (j *fence) MarkMailed(ctx context.Context, id string, at time.Time) error {
	return j.db.Update(ctx, "recording mail of order "+id,
		`UPDATE orders SET mailed_at = ?, email = '' WHERE id = ?`, millis(at), id)
}

// refundedFenced records the refund of a failed order and erases what the visitor gave
// us, for the holder of the refund's claim (claimRefund); false when refused. The address
// stays while the letter is not sent (MarkMailed erases it): the letter is sent again
// (resendLetters) or the operator's list shows it.
func (j *fence) refundedFenced(ctx context.Context, id string, claim int64) (bool, error) {
	return j.db.Changed(ctx, "refunding order "+id,
		`UPDATE orders SET status = ?, params = '{}' WHERE id = ? AND claim = ? AND status = ?`,
		Refunded, id, claim, Failed)
}

// claim takes a new claim on a paid order for this run and marks it processing, counting
// the run; it returns the claim and how many runs the order has had, this one included
// (a run its node's death ended counts: nothing else would). ErrClaimLost when the order
// is past that (delivered, refunded, erased).
func (j *fence) claim(ctx context.Context, id string) (claim, runs int64, err error) {
	err = j.db.QueryRowContext(ctx, `UPDATE orders SET status = ?, claim = claim + 1, runs = runs + 1, claimed_by = ?
		WHERE id = ? AND status IN (?, ?) AND erased = 0 RETURNING claim, runs`, Processing, j.node, id, Paid, Processing).Scan(&claim, &runs)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("claiming order %s: %w", id, ErrClaimLost)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("claiming order %s: %w", id, err)
	}
	return claim, runs, nil
}

// giveBackRun uncounts the run of claim: it was stopped by a shutdown, not by the order.
func (j *fence) giveBackRun(ctx context.Context, id string, claim int64) error {
	return j.db.Update(ctx, "giving back a run of order "+id,
		`UPDATE orders SET runs = runs - 1 WHERE id = ? AND claim = ? AND runs > 0`, id, claim)
}

// claimRefund takes a new claim on a failed order for its refund: an operator's retry
// (which takes one too) fences a refund that was frozen off; ErrClaimLost when the order
// is not failed (refunded already, or retried).
func (j *fence) claimRefund(ctx context.Context, id string) (int64, error) {
	var c int64
	err := j.db.QueryRowContext(ctx, `UPDATE orders SET claim = claim + 1 WHERE id = ? AND status = ? RETURNING claim`,
		id, Failed).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("claiming the refund of order %s: %w", id, ErrClaimLost)
	}
	if err != nil {
		return 0, fmt.Errorf("claiming the refund of order %s: %w", id, err)
	}
	return c, nil
}

// refundSending records, for the holder of the refund's claim on a failed order, that its
// refund is going to the payment provider; false when refused (an operator's retry took
// the order back). The operator's retry is refused once it is recorded (retryFailed), so
// of the two exactly one goes on. The first claim to record it keeps the mark (its time
// and refund_claim): a later claim's refund goes out under it, and only the first may
// take it back (refundRefused). Whatever was erased: the money goes back all the same.
func (j *fence) refundSending(ctx context.Context, id string, claim int64, at time.Time) (bool, error) {
	return j.db.Changed(ctx, "sending the refund of order "+id,
		`UPDATE orders SET refund_claim = CASE WHEN refund_sent_at = 0 THEN ? ELSE refund_claim END,
		   refund_sent_at = CASE WHEN refund_sent_at = 0 THEN ? ELSE refund_sent_at END
		 WHERE id = ? AND claim = ? AND status = ?`,
		claim, millis(at), id, claim, Failed)
}

// refundRefused takes back refundSending's mark when the provider certainly did not
// refund (providers.ErrNotRefunded), for the claim that made the mark while it still holds
// the order: the operator may retry the order again. False when refused: the mark was made
// by an earlier claim, whose refund may have gone through (its answer unknown, or still
// coming), or the order was taken meanwhile; the mark stays.
func (j *fence) refundRefused(ctx context.Context, id string, claim int64) (bool, error) {
	return j.db.Changed(ctx, "recording the refused refund of order "+id,
		`UPDATE orders SET refund_sent_at = 0, refund_claim = 0
		 WHERE id = ? AND claim = ? AND refund_claim = ? AND refund_sent_at != 0 AND status = ?`,
		id, claim, claim, Failed)
}

// keptOrRefunding is the condition that an order's erasure (erase.go) does not stop a write
// of it: a delivery's writes need its result kept, a failed order's refund (its mark, its
// letter) does not. The money and its news go back whatever "delete now" or a lapsed link
// removed.
const keptOrRefunding = `(erased = 0 OR status = '` + string(Failed) + `')`

// holds tells whether claim is still the order's, the order in status and not erased
// (keptOrRefunding).
func (j *fence) holds(ctx context.Context, id string, claim int64, status Status) (bool, error) {
	var n int64
	err := j.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM orders WHERE id = ? AND claim = ? AND status = ? AND `+keptOrRefunding,
		id, claim, status).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("checking the claim on order %s: %w", id, err)
	}
	return n > 0, nil
}

// setProgressFenced records progress (0–100) of a running order, for the holder of claim;
// false when refused (the run lost its order).
func (j *fence) setProgressFenced(ctx context.Context, id string, claim int64, percent int) (bool, error) {
	percent = min(max(percent, 0), 100)
	return j.db.Changed(ctx, "recording progress of order "+id,
		`UPDATE orders SET progress = ? WHERE id = ? AND status = ? AND claim = ?`, percent, id, Processing, claim)
}

// setResultFenced records the stored result and its download link, for the holder of
// claim, on an order still running, not erased and without a result (a claim never
// replaces a stored one); false when refused. It keeps an existing link, so a repeated
// step never hands out a second one.
func (j *fence) setResultFenced(ctx context.Context, id string, claim int64, key, name, token string, expires time.Time) (bool, error) {
	return j.db.Changed(ctx, "recording result of order "+id,
		`UPDATE orders SET result_key = ?, result_name = ?,
		   link_token = COALESCE(link_token, ?),
		   link_expires_at = CASE WHEN link_expires_at = 0 THEN ? ELSE link_expires_at END,
		   progress = 100
		 WHERE id = ? AND claim = ? AND status = ? AND erased = 0 AND result_key = ''`, key, name, token, millis(expires), id, claim, Processing)
}

// finishFenced marks an order done and erases its parameters (the visitor's text), for
// the holder of claim; false when refused.
func (j *fence) finishFenced(ctx context.Context, id string, claim int64, at time.Time) (bool, error) {
	return j.db.Changed(ctx, "finishing order "+id,
		`UPDATE orders SET status = ?, done_at = ?, params = '{}', progress = 100
		 WHERE id = ? AND claim = ? AND status = ?`, Done, millis(at), id, claim, Processing)
}

// failFenced marks a running order failed (a refund follows), for the holder of claim;
// false when refused: a runner that lost the order must not fail what another delivers.
func (j *fence) failFenced(ctx context.Context, id string, claim int64, reason string) (bool, error) {
	return j.db.Changed(ctx, "failing order "+id,
		`UPDATE orders SET status = ?, error = ? WHERE id = ? AND claim = ? AND status IN (?, ?)`,
		Failed, reason, id, claim, Paid, Processing)
}

// finishUnmailedFenced marks done an order whose result is stored but whose letter could
// not be sent (the link is on the confirmation page), for the holder of claim; false when
// refused. The letter stays unsent, with its address: sent again later (resendLetters)
// when it certainly did not leave, else in the operator's list.
func (j *fence) finishUnmailedFenced(ctx context.Context, id string, claim int64, at time.Time) (bool, error) {
	return j.db.Changed(ctx, "finishing order "+id,
		`UPDATE orders SET status = ?, done_at = ?, params = '{}', progress = 100
		 WHERE id = ? AND claim = ? AND status IN (?, ?) AND result_key != ''`, Done, millis(at), id, claim, Paid, Processing)
}

// claimLetter claims the sending of the order's letter before it is sent, for the holder
// of claim while the order is in status (processing: its link; failed: the news of its
// refund) and not erased (keptOrRefunding): false when it was claimed or sent before, or
// the order is no longer the claim's. A crash between the claim and the send leaves it
// unsent (the operator's Resend is the remedy); only a send that certainly did not leave
// (providers.ErrNotSent) gives the claim back (unclaimLetter).
func (j *fence) claimLetter(ctx context.Context, id string, claim int64, status Status, at time.Time) (bool, error) {
	return j.db.Changed(ctx, "claiming the letter of order "+id,
		`UPDATE orders SET mail_claimed_at = ?
		 WHERE id = ? AND mail_claimed_at = 0 AND mailed_at = 0 AND claim = ? AND status = ? AND `+keptOrRefunding,
		millis(at), id, claim, status)
}

// unclaimLetter gives back the claim of a letter whose send certainly failed at a time, so
// a retry sends it (the run's, or resendLetters after letterRetryAfter), for the holder of
// claim; false when refused: a run that lost the order gives nothing back (the winner found
// the letter claimed and went on without it; a claim left taken says its fate was unknown
// then, and the operator's Resend is the remedy).
func (j *fence) unclaimLetter(ctx context.Context, id string, claim int64, at time.Time) (bool, error) {
	return j.db.Changed(ctx, "giving back the letter of order "+id,
		`UPDATE orders SET mail_claimed_at = 0, mail_failed_at = ? WHERE id = ? AND mailed_at = 0 AND claim = ?`,
		millis(at), id, claim)
}

// rejectLetter records that the mail server refused the order's letter for good (a 5xx
// reply), for the holder of claim: the letter's claim stays taken, so nothing sends it
// again by itself, and the operator's list shows it; false when refused (the run lost
// the order).
func (j *fence) rejectLetter(ctx context.Context, id string, claim int64, at time.Time) (bool, error) {
	return j.db.Changed(ctx, "recording the refused letter of order "+id,
		`UPDATE orders SET mail_rejected_at = ? WHERE id = ? AND mailed_at = 0 AND mail_claimed_at != 0 AND claim = ?`,
		millis(at), id, claim)
}

// unsentLetter is the condition on an ended order (done, or refunded) whose letter is
// to be sent again: not sent, not claimed (none in flight, none in doubt, none refused for
// good), an address to send to, its last certain failure before ? and its payment after ?
// (past that, the operator's list keeps it).
const unsentLetter = `status IN (?, ?) AND erased = 0 AND mailed_at = 0 AND mail_claimed_at = 0 AND email != ''
	AND mail_failed_at < ? AND paid_at > ?`

// unsentLetters lists at most limit ended orders whose letter is to be sent again
// (unsentLetter), the longest waiting first.
func (j *fence) unsentLetters(ctx context.Context, failedBefore, paidAfter time.Time, limit int) ([]string, error) {
	return sqldb.QueryAll(ctx, j.db, func(r sqldb.Scanner) (id string, err error) { return id, r.Scan(&id) },
		`SELECT id FROM orders WHERE `+unsentLetter+` ORDER BY mail_failed_at LIMIT ?`,
		Done, Refunded, millis(failedBefore), millis(paidAfter), limit)
}

// claimUnsentLetter takes a new claim on an ended order whose letter is to be sent again
// (unsentLetter) and its letter's claim, in one statement: the new claim fences off any
// earlier runner; ErrClaimLost when the order no longer qualifies.
func (j *fence) claimUnsentLetter(ctx context.Context, id string, failedBefore, paidAfter, at time.Time) (int64, error) {
	var c int64
	err := j.db.QueryRowContext(ctx, `UPDATE orders SET claim = claim + 1, mail_claimed_at = ?
		WHERE id = ? AND `+unsentLetter+` RETURNING claim`,
		millis(at), id, Done, Refunded, millis(failedBefore), millis(paidAfter)).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("claiming the letter of order %s: %w", id, ErrClaimLost)
	}
	if err != nil {
		return 0, fmt.Errorf("claiming the letter of order %s: %w", id, err)
	}
	return c, nil
}

// claimPrefix is where the claim's objects of an order live.
func claimPrefix(id string, claim int64) string {
	return "results/" + id + "/" + strconv.FormatInt(claim, 10) + "/"
}
