package orders

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// jobControl is what the admin area needs of River's client, whatever its driver
// (riversqlite's *sql.Tx or riverpgxv5's pgx.Tx): list an order's jobs, retry, cancel.
type jobControl interface {
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	JobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
}

// Attempt is one run of an order's job (fulfil or refund), with its error if it failed.
type Attempt struct {
	Job     string // fulfil, refund
	JobID   int64
	Attempt int
	At      time.Time
	Error   string // empty for the run that succeeded or is running
	State   string // the job's state now
}

// orderJobs lists the fulfilment and refund jobs of one order, oldest first, through
// River's client. The one SQL predicate is on the job's JSON args: `args ->> 'order_id'`
// reads a top-level key on SQLite (3.38+) and on Postgres' jsonb alike.
func orderJobs(ctx context.Context, jobs jobControl, orderID string) ([]*rivertype.JobRow, error) {
	params := river.NewJobListParams().
		Kinds(FulfilArgs{}.Kind(), RefundArgs{}.Kind()).
		Where("args ->> 'order_id' = @order_id", river.NamedArgs{"order_id": orderID}).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).
		First(20)
	res, err := jobs.JobList(ctx, params)
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
func finalState(s string) bool {
	switch rivertype.JobState(s) {
	case rivertype.JobStateCancelled, rivertype.JobStateCompleted, rivertype.JobStateDiscarded:
		return true
	}
	return false
}
