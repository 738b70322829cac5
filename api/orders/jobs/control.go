package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// The operator's controls over an order's jobs (the admin area's retry, refund and
// timeline), through River's client.

// Attempt is one run of an order's job (fulfil or refund), with its error if it failed.
type Attempt struct {
	Job     string // fulfil, refund
	JobID   int64
	Attempt int
	At      time.Time
	Error   string // empty for the run that succeeded or is running
	State   string // the job's state now
}

// Attempts lists the attempts of an order's fulfilment and refund jobs, oldest first.
func (q *Queue) Attempts(ctx context.Context, orderID string) ([]Attempt, error) {
	jobs, err := orderJobs(ctx, q.client, orderID)
	if err != nil {
		return nil, err
	}
	return attemptsOf(jobs), nil
}

// RefundRunning reports whether the order's refund job is running now.
func (q *Queue) RefundRunning(ctx context.Context, orderID string) (bool, error) {
	jobs, err := orderJobs(ctx, q.client, orderID)
	if err != nil {
		return false, err
	}
	return findJob(jobs, kindRefund, string(rivertype.JobStateRunning)) != nil, nil
}

// CancelFulfilment cancels the order's unfinished fulfilment job.
func (q *Queue) CancelFulfilment(ctx context.Context, orderID string) error {
	return cancelJobs(ctx, q.client, orderID, kindFulfil)
}

// CancelRefund cancels the order's unfinished refund job.
func (q *Queue) CancelRefund(ctx context.Context, orderID string) error {
	return cancelJobs(ctx, q.client, orderID, kindRefund)
}

// cancelJobs cancels the order's unfinished jobs of kind.
func cancelJobs(ctx context.Context, client riverClient, orderID, kind string) error {
	jobs, err := orderJobs(ctx, client, orderID)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Kind == kind && !finalState(j.State) {
			if _, err := client.JobCancel(ctx, j.ID); err != nil {
				return fmt.Errorf("cancelling the %s job of order %s: %w", kind, orderID, err)
			}
		}
	}
	return nil
}

// RetryFulfilment runs the order's fulfilment again under a new job (Requeue), never
// River's JobRetry, which does nothing to a row still running yet would report success:
// a run still going on the old row is fenced off by the new run's claim.
func (q *Queue) RetryFulfilment(ctx context.Context, orderID string) (string, error) {
	id, err := q.Requeue(ctx, orderID)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("fulfilment queued again (job %d)", id), nil
}

// Requeue queues a paid order's fulfilment under a new key, the next after every key its
// fulfilment jobs had (fulfilArgs is unique by its arguments for good), whatever those
// jobs became; it returns the job's id. Two callers racing compute the same key, so one
// job is queued. The run claims the order first, so an older run still going delivers
// nothing after it.
func (q *Queue) Requeue(ctx context.Context, orderID string) (int64, error) {
	next, err := nextKey(ctx, q.db, orderID)
	if err != nil {
		return 0, err
	}
	res, err := q.client.Insert(ctx, fulfilArgs{OrderID: orderID, Takeover: next}, nil)
	if err != nil {
		return 0, fmt.Errorf("queueing fulfilment of order %s again: %w", orderID, err)
	}
	return res.Job.ID, nil
}

// orderJobs lists the fulfilment and refund jobs of one order, oldest first, through
// River's client. The one SQL predicate is on the job's JSON args: `args ->> 'order_id'`
// reads a top-level key on SQLite (3.38+) and on Postgres' jsonb alike.
func orderJobs(ctx context.Context, client riverClient, orderID string) ([]*rivertype.JobRow, error) {
	params := river.NewJobListParams().
		Kinds(kindFulfil, kindRefund).
		Where("args ->> 'order_id' = @order_id", river.NamedArgs{"order_id": orderID}).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).
		First(20)
	res, err := client.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("listing the jobs of order %s: %w", orderID, err)
	}
	return res.Jobs, nil
}

// attemptsOf flattens jobs into their attempts: one per recorded error, plus the last run
// when it did not fail (it succeeded, or is running).
func attemptsOf(jobs []*rivertype.JobRow) []Attempt {
	var out []Attempt
	for _, j := range jobs {
		failed := map[int]bool{}
		for _, e := range j.Errors {
			failed[e.Attempt] = true
			out = append(out, Attempt{Job: j.Kind, JobID: j.ID, Attempt: e.Attempt, At: e.At.UTC(),
				Error: e.Error, State: string(j.State)})
		}
		if j.Attempt > 0 && !failed[j.Attempt] && j.AttemptedAt != nil {
			out = append(out, Attempt{Job: j.Kind, JobID: j.ID, Attempt: j.Attempt, At: j.AttemptedAt.UTC(),
				State: string(j.State)})
		}
	}
	return out
}

// findJob is the newest job of a kind, in a state when state is set.
func findJob(jobs []*rivertype.JobRow, kind, state string) *rivertype.JobRow {
	for i := len(jobs) - 1; i >= 0; i-- {
		if jobs[i].Kind == kind && (state == "" || string(jobs[i].State) == state) {
			return jobs[i]
		}
	}
	return nil
}

// finalState reports whether a job state is one River never leaves by itself.
func finalState(s rivertype.JobState) bool {
	switch s {
	case rivertype.JobStateCancelled, rivertype.JobStateCompleted, rivertype.JobStateDiscarded:
		return true
	}
	return false
}
