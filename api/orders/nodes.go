package orders

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"parla/providers/sqldb"
)

// Nodes of a cluster (Postgres): each process writes a heartbeat under its River client
// id, so that a node starting up can tell the jobs of a dead process (its own previous
// one, or any other that died) from the jobs a live node is running. River's own rescue
// (Config.RescueAfter) remains the cluster's guarantee; this only spares a restarted node
// the wait for its own orphans.

const (
	heartbeatEvery = 10 * time.Second
	// A node unseen for this long is dead: three missed heartbeats.
	nodeDeadAfter = 3 * heartbeatEvery
)

// nodeRows are the heartbeats in the nodes table.
type nodeRows struct {
	db *sqldb.DB
	id string
}

// beat records that this node is alive.
func (n *nodeRows) beat(ctx context.Context, now time.Time) error {
	return execRow(ctx, n.db, "recording the heartbeat of node "+n.id,
		`INSERT INTO nodes (id, started_at, seen_at) VALUES (?, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, n.id, millis(now), millis(now))
}

// leave removes this node's heartbeat at a clean shutdown, and prunes long-dead nodes.
func (n *nodeRows) leave(ctx context.Context, now time.Time) error {
	return execRow(ctx, n.db, "removing the heartbeat of node "+n.id,
		`DELETE FROM nodes WHERE id = ? OR seen_at < ?`, n.id, millis(now.Add(-24*time.Hour)))
}

// heartbeat beats until ctx ends, then leaves.
func (n *nodeRows) heartbeat(ctx context.Context, now func() time.Time, log *slog.Logger) {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		if err := n.beat(ctx, now()); err != nil && ctx.Err() == nil {
			log.Warn("heartbeat", "err", err)
		}
		select {
		case <-ctx.Done():
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := n.leave(stopCtx, now()); err != nil {
				log.Warn("leaving the cluster", "err", err)
			}
			return
		case <-t.C:
		}
	}
}

// reclaimOrphans makes available again the running jobs whose last attempt belongs to a
// node with no recent heartbeat (River records the client id of each attempt in
// attempted_by). Postgres only.
func (n *nodeRows) reclaimOrphans(ctx context.Context) (int64, error) {
	res, err := n.db.ExecContext(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now()
		WHERE state = 'running' AND NOT EXISTS (
			SELECT 1 FROM nodes
			 WHERE nodes.id = river_job.attempted_by[array_length(river_job.attempted_by, 1)]
			   AND nodes.seen_at > ?)`, millis(time.Now().Add(-nodeDeadAfter)))
	if err != nil {
		return 0, fmt.Errorf("reclaiming jobs of dead nodes: %w", err)
	}
	return res.RowsAffected()
}

// nodeName makes a River client id prefix of a host name: letters, digits and dashes.
func nodeName(host string) string {
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, host)
	host = strings.Trim(host, "-")
	if host == "" {
		host = "node"
	}
	return host[:min(len(host), 40)]
}
