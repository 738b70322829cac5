package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"parla/providers/sqldb"
)

// Nodes of a cluster (Postgres): each process writes a heartbeat under its River client
// id, every heartbeatEvery, on the database's clock (so the nodes' own clocks may differ).
// A node whose heartbeat is older than nodeDeadAfter is dead: every live node looks for
// such nodes after each of its own heartbeats and makes their running jobs available
// again, so a visitor waits seconds for a dead node's order, not River's rescue delay
// (Config.RescueAfter, which stays the last resort, e.g. for a job whose node is alive but
// stuck). A node that boots does the same before it starts working.

// The defaults of Config.HeartbeatEvery and Config.NodeDeadAfter.
const (
	DefaultHeartbeatEvery = heartbeatEvery
	DefaultNodeDeadAfter  = nodeDeadAfter
)

const (
	heartbeatEvery = 2 * time.Second
	// A node unseen for this long is dead: five missed heartbeats, so a busy machine or a
	// slow query does not make a live node look dead.
	nodeDeadAfter = 10 * time.Second
)

// dbMillis is the database's clock in Unix milliseconds (Postgres): every node's
// heartbeat and every judgement of one use the same clock.
const dbMillis = `(extract(epoch from clock_timestamp()) * 1000)::bigint`

// nodeRows are the heartbeats in the nodes table.
type nodeRows struct {
	db *sqldb.DB
	id string
	// boot is this process's nonce: the node's identity is its id and its boot, so another
	// process that takes the same id is told apart (boot.go).
	boot string
	// lease is renewed by every successful beat (lease.go); nil in tests that beat alone.
	lease *lease
	// every and deadAfter are Config.HeartbeatEvery and NodeDeadAfter (0: the defaults).
	every, deadAfter time.Duration
	// judging: this node's last JudgeAfterBeats beats came without a gap, so it may judge
	// other nodes dead (mayJudge): its takeovers, and LiveHolders.
	judging atomic.Bool
}

// timing is the node's heartbeat period and death timeout.
func (n *nodeRows) timing() (every, deadAfter time.Duration) {
	every, deadAfter = n.every, n.deadAfter
	if every <= 0 {
		every = heartbeatEvery
	}
	if deadAfter <= 0 {
		deadAfter = nodeDeadAfter
	}
	return every, deadAfter
}

// JudgeAfterBeats is how many beats in a row, without a gap or a failure, a node needs
// before it judges other nodes dead: after a freeze or an outage its own view of the
// others is stale until it has beaten regularly again.
const JudgeAfterBeats = 3

// beat records that this node is alive, and renews its lease as of when the beat was sent.
func (n *nodeRows) beat(ctx context.Context) error {
	sent := time.Now()
	ok, err := n.db.Changed(ctx, "recording the heartbeat of node "+n.id,
		`INSERT INTO nodes (id, started_at, seen_at, boot) VALUES (?, `+dbMillis+`, `+dbMillis+`, ?)
		 ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at WHERE nodes.boot = excluded.boot`, n.id, n.boot)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %s", errIDTaken, n.id)
	}
	if err == nil && n.lease != nil {
		n.lease.renew(sent)
	}
	return err
}

// Holder is this process's identity, stable for its life: its node id and its boot nonce
// (a later process under the same id is another holder).
func (q *Queue) Holder() string { return q.nodes.holder() }

// holder is the node's identity: its id and its process's boot.
func (n *nodeRows) holder() string { return n.id + ":" + n.boot }

// LiveHolders are the identities (Holder) of the live processes: on SQLite this one, which
// owns the database; on Postgres this one and every node whose heartbeat is more recent than
// NodeDeadAfter. What a holder not listed holds (a hold of its calls) is a dead process's.
// A node judges others dead only by the takeovers' rule (mayJudge): until its own beats are
// regular (after an outage of the database every heartbeat is stale, its own too), every
// node with a row is listed live.
func (q *Queue) LiveHolders(ctx context.Context) ([]string, error) {
	if q.db.Dialect != sqldb.Postgres {
		return []string{q.Holder()}, nil
	}
	staleAfter := 100 * 365 * 24 * time.Hour // not judging: none is dead
	if q.nodes.judging.Load() {
		_, staleAfter = q.nodes.timing()
	}
	live, err := sqldb.QueryAll(ctx, q.db, func(row sqldb.Scanner) (string, error) {
		var h string
		return h, row.Scan(&h)
	}, `SELECT id || ':' || boot FROM nodes WHERE seen_at > `+dbMillis+` - ?`, staleAfter.Milliseconds())
	if err != nil || slices.Contains(live, q.Holder()) {
		return live, err
	}
	return append(live, q.Holder()), nil
}

// leave removes this node's heartbeat at a clean shutdown, and prunes long-dead nodes.
func (n *nodeRows) leave(ctx context.Context) error {
	return n.db.Update(ctx, "removing the heartbeat of node "+n.id,
		`DELETE FROM nodes WHERE id = ? OR seen_at < `+dbMillis+` - ?`, n.id, (24 * time.Hour).Milliseconds())
}

// heartbeat beats until ctx ends, then leaves. After each beat that follows another
// without a gap it takes over the jobs of dead nodes (mayJudge) with takeOver. A beat that
// finds the id taken by another process (errIDTaken) calls displaced and stops beating,
// leaving the row to its owner.
func (n *nodeRows) heartbeat(ctx context.Context, log *slog.Logger, takeOver func(context.Context) (int64, error), displaced func()) {
	every, _ := n.timing()
	t := time.NewTicker(every)
	defer t.Stop()
	var lastBeat time.Time
	regular := 0 // beats in a row without a gap
	for {
		beatCtx, cancel := context.WithTimeout(ctx, every)
		err := n.beat(beatCtx)
		cancel()
		switch {
		case errors.Is(err, errIDTaken):
			displaced()
			return
		case err != nil:
			regular = 0
			n.judging.Store(false)
			if ctx.Err() == nil {
				log.Warn("heartbeat", "err", err)
			}
		case err == nil:
			now := time.Now()
			if mayJudge(lastBeat, now, every) {
				regular++
			} else {
				regular = 0
			}
			n.judging.Store(regular >= JudgeAfterBeats)
			if regular >= JudgeAfterBeats {
				logTakeOver(ctx, log, takeOver)
			}
			lastBeat = now
		}
		select {
		case <-ctx.Done():
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := n.leave(stopCtx); err != nil {
				log.Warn("leaving the cluster", "err", err)
			}
			return
		case <-t.C:
		}
	}
}

// mayJudge says whether a node beating every interval, whose previous successful
// heartbeat was at last, may count its beat now as regular (JudgeAfterBeats of them let it
// judge other nodes dead): only when its own beats came without a gap. After an outage of
// the database every node's heartbeat is stale; the first node to reconnect must not take
// the jobs of nodes that are alive and only not yet reconnected.
func mayJudge(last, now time.Time, every time.Duration) bool {
	return !last.IsZero() && now.Sub(last) <= 2*every
}

// logTakeOver takes over the running jobs of dead nodes and logs how many.
func logTakeOver(ctx context.Context, log *slog.Logger, takeOver func(context.Context) (int64, error)) {
	k, err := takeOver(ctx)
	if err != nil && ctx.Err() == nil {
		log.Warn("taking over the jobs of dead nodes", "err", err)
	}
	if k > 0 {
		log.Warn("jobs of a node that stopped beating are queued again", "jobs", k)
	}
}

// deadNodesJobs is the SQL that selects the running jobs whose last attempt belongs to a
// node with no recent heartbeat (River records the client id of each attempt in
// attempted_by), its one argument the death timeout in milliseconds. Postgres only.
const deadNodesJobs = `SELECT id, kind, args FROM river_job
	WHERE state = 'running' AND NOT EXISTS (
		SELECT 1 FROM nodes
		 WHERE nodes.id = river_job.attempted_by[array_length(river_job.attempted_by, 1)]
		   AND nodes.seen_at > ` + dbMillis + ` - ?)`

// NodeName makes a River client id prefix of a host name: letters, digits and dashes.
func NodeName(host string) string {
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
