package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
)

// The fault suite's Postgres restarts in the middle of a commit (issue 44): a write whose
// commit the node sent when Postgres went away is, to the node, of unknown outcome. The
// suite pauses that one commit (a deferred constraint trigger, run at COMMIT, sleeping
// once: commitPause) and restarts Postgres while it waits, so the transaction is cut at its
// commit: the node's answer is an error, and nothing was written. Kinds: postgres@order
// (the letter's claim, or in the second round the stored result) and postgres@money (a
// failed order's refund mark, or in the second round an API call's settle).

// commitPause is how long the paused commit waits for the restart.
const commitPause = 5 * time.Second

// safeLiteral is what an id may be to be written into the trigger's condition.
var safeLiteral = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// pauseCommit arms a pause of the next commit that makes an UPDATE of table meet when
// (old and new row: OLD, NEW); id is the row's, checked before it is written into when.
func (fc *faultCluster) pauseCommit(t *testing.T, table, when, id string) {
	t.Helper()
	if !safeLiteral.MatchString(id) {
		t.Fatalf("id %q cannot be written into a trigger", id)
	}
	fc.one(`DROP SEQUENCE IF EXISTS fault_commit_once`)
	fc.one(`CREATE SEQUENCE fault_commit_once`)
	fc.one(fmt.Sprintf(`CREATE OR REPLACE FUNCTION fault_commit_pause() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN IF nextval('fault_commit_once') = 1 THEN PERFORM pg_sleep(%d); END IF; RETURN NULL; END $$`, int(commitPause.Seconds())))
	fc.one(`CREATE CONSTRAINT TRIGGER fault_commit_pause AFTER UPDATE ON ` + table + `
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (` + fmt.Sprintf(when, "'"+id+"'") + `)
		EXECUTE FUNCTION fault_commit_pause()`)
}

// restartMidCommit waits for the paused commit and restarts Postgres under it; the pause
// is disarmed once Postgres is back.
func (fc *faultCluster) restartMidCommit(t *testing.T, s *schedule, table string) {
	t.Helper()
	if !testkit.WaitFor(60*time.Second, func() bool {
		return fc.one(`SELECT count(*)::text FROM pg_stat_activity WHERE wait_event = 'PgSleep'`) != "0"
	}) {
		t.Fatalf("no commit paused at %s", s.kind)
	}
	s.faultAt = time.Now()
	fc.pg.Down()
	time.Sleep(time.Duration(200+s.rng.IntN(800)) * time.Millisecond)
	fc.pg.Up(t)
	fc.one(`DROP TRIGGER IF EXISTS fault_commit_pause ON ` + table)
}

// postgresMidCommit plays the kinds: the letter's claim or the stored result of an order,
// a failed order's refund mark, or an API call's settle, cut at its commit.
func (fc *faultCluster) postgresMidCommit(t *testing.T, s *schedule) {
	second := (s.seed-1)/uint64(len(faultKinds))%2 == 1
	arm := func(what, when string) func(id string) {
		s.fig.addNote("Postgres restarted mid-commit of " + what)
		return func(id string) { fc.pauseCommit(t, "orders", "NEW.id = %s AND "+when, id) }
	}
	switch {
	case s.kind == "postgres@order" && !second:
		s.id = fc.placeArmed(t, s, "", arm("the letter's claim", "OLD.mail_claimed_at = 0 AND NEW.mail_claimed_at <> 0"))
	case s.kind == "postgres@order":
		s.id = fc.placeArmed(t, s, "", arm("the result", "OLD.result_key = '' AND NEW.result_key <> ''"))
	case !second:
		s.id = fc.placeArmed(t, s, failMark+" ", arm("the refund mark", "OLD.refund_sent_at = 0 AND NEW.refund_sent_at <> 0"))
	default:
		fc.settleMidCommit(t, s)
		return
	}
	fc.restartMidCommit(t, s, "orders")
}

// settleMidCommit buys API credit and makes one transcription whose settle is cut at its
// commit: the key's balance, what it holds and what it settled add up to what it bought,
// and the call ends settled or released within apiHoldBound: a failed settle's release that
// meets Postgres still away is tried again (api/v1 charge.go's releaseLater). Before, it was
// tried once, at once, and the hold of a live node then waited for the stale-hold bound.
func (fc *faultCluster) settleMidCommit(t *testing.T, s *schedule) {
	s.fig.addNote("Postgres restarted mid-commit of an API call's settle")
	base := fc.nodes[s.rng.IntN(len(fc.nodes))].base
	secret := buyCreditFrom(t, base, 500)
	key := fc.one(`SELECT id FROM credit_keys ORDER BY created_at DESC LIMIT 1`)
	bought := fc.one(`SELECT balance::text FROM credit_keys WHERE id = $1`, key)
	fc.pauseCommit(t, "credit_calls", "NEW.key_id = %s AND OLD.state = 'held' AND NEW.state = 'settled'", key)
	body, ctype := transcriptionForm(t, fc.clip(), "model", "whisper-1")
	answer := make(chan int, 1)
	go func() { answer <- transcribe(base, secret, body, ctype) }()
	fc.restartMidCommit(t, s, "credit_calls")
	status := <-answer
	var calls string
	if !testkit.WaitFor(apiHoldBound, func() bool {
		calls = fc.one(`SELECT string_agg(state || ' by ' || holder, ' ') FROM credit_calls WHERE key_id = $1`, key)
		return !strings.HasPrefix(calls, "held ")
	}) {
		t.Errorf("key %s: its call is %s %s after the restart (answered %d)", key, calls, apiHoldBound, status)
	}
	s.doneAt = time.Now()
	s.fig.deathToDone = s.doneAt.Sub(s.faultAt)
	s.fig.addNote(fmt.Sprintf("the call answered %d, ended %s", status, calls))
	if total := fc.one(`SELECT (k.balance + k.held + COALESCE((SELECT sum(amount) FROM credit_calls
		WHERE key_id = k.id AND state = 'settled'), 0))::text FROM credit_keys k WHERE k.id = $1`, key); total != bought {
		t.Errorf("key %s: balance + held + settled = %s, bought %s", key, total, bought)
	}
}
