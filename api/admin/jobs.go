package admin

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/riverqueue/river"
	"riverqueue.com/riverui"
)

// JobsPrefix is where River's UI is mounted.
const JobsPrefix = "/admin/jobs"

// NewJobsUI builds and starts River's own UI (riverui) over the queue's client, for any
// driver: riversqlite's *sql.Tx (riverui v0.22.0 reads SQLite) or riverpgxv5's pgx.Tx. It
// stops when ctx ends. Mount it with Config.Jobs: the admin area puts it behind its login.
func NewJobsUI[TTx any](ctx context.Context, client *river.Client[TTx], log *slog.Logger) (http.Handler, error) {
	h, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(client, nil),
		Logger:    log,
		Prefix:    JobsPrefix,
	})
	if err != nil {
		return nil, fmt.Errorf("building River's UI: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting River's UI: %w", err)
	}
	return h, nil
}
