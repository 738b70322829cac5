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
	jobs, err := q.orderJobs(ctx, orderID)
	if err != nil {
		return nil, err
	}
	return attemptsOf(jobs), nil
}

// RefundRunning reports whether the order's refund job is running now.
func (q *Queue) RefundRunning(ctx context.Context, orderID string) (bool, error) {
	jobs, err := q.orderJobs(ctx, orderID)
	if err != nil {
		return false, err
	}
	return findJob(jobs, kindRefund, string(rivertype.JobStateRunning)) != nil, nil
}

// CancelFulfilment cancels the order's unfinished fulfilment job.
func (q *Queue) CancelFulfilment(ctx context.Context, orderID string) error {
	return q.cancel(ctx, orderID, kindFulfil)
}

// CancelRefund cancels the order's unfinished refund job.
func (q *Queue) CancelRefund(ctx context.Context, orderID string) error {
	return q.cancel(ctx, orderID, kindRefund)
}

// cancel cancels the order's unfinished jobs of kind.
func (q *Queue) cancel(ctx context.Context, orderID, kind string) error {
	jobs, err := q.orderJobs(ctx, orderID)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Kind == kind && !finalState(j.State) {
			if _, err := q.client.JobCancel(ctx, j.ID); err != nil {
				return fmt.Errorf("cancelling the %s job of order %s: %w", kind, orderID, err)
			}
		}
	}
	return nil
}

// RetryFulfilment runs the order's fulfilment again: its newest fulfilment job is queued
// again, or a new one is inserted when it has none. It says which.
func (q *Queue) RetryFulfilment(ctx context.Context, orderID string) (string, error) {
	jobs, err := q.orderJobs(ctx, orderID)
	if err != nil {
		return "", err
	}
	if j := findJob(jobs, kindFulfil, ""); j != nil {
		if _, err := q.client.JobRetry(ctx, j.ID); err != nil {
			return "", fmt.Errorf("retrying job %d of order %s: %w", j.ID, orderID, err)
		}
		return fmt.Sprintf("fulfilment job %d queued again", j.ID), nil
	}
	if err := q.Fulfil(ctx, orderID); err != nil {
		return "", err
	}
	return "fulfilment queued", nil
}

// orderJobs lists the fulfilment and refund jobs of one order, oldest first, through
// River's client. The one SQL predicate is on the job's JSON args: `args ->> 'order_id'`
// reads a top-level key on SQLite (3.38+) and on Postgres' jsonb alike.
func (q *Queue) orderJobs(ctx context.Context, orderID string) ([]*rivertype.JobRow, error) {
	params := river.NewJobListParams().
		Kinds(kindFulfil, kindRefund).
		Where("args ->> 'order_id' = @order_id", river.NamedArgs{"order_id": orderID}).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).
		First(20)
	res, err := q.client.JobList(ctx, params)
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
