package orders

import (
	"context"

	"parla/providers/sqldb"
)

// migrations are applied in order, each once; append, never edit. The SQL is the same on
// SQLite and Postgres (providers/sqldb): BIGINT for numbers (times are unix milliseconds),
// TEXT for the rest. (Migrations 1 and 2 said INTEGER before Postgres came: the same
// column type for SQLite, too small for milliseconds on Postgres.)
var migrations = []string{
	`CREATE TABLE orders (
		id              TEXT PRIMARY KEY,
		service         TEXT NOT NULL,
		status          TEXT NOT NULL,
		params          TEXT NOT NULL DEFAULT '{}',
		email           TEXT NOT NULL DEFAULT '',
		locale          TEXT NOT NULL DEFAULT 'en',
		amount          BIGINT NOT NULL,
		currency        TEXT NOT NULL,
		session_id      TEXT,
		payment_intent  TEXT NOT NULL DEFAULT '',
		progress        BIGINT NOT NULL DEFAULT 0,
		result_key      TEXT NOT NULL DEFAULT '',
		result_name     TEXT NOT NULL DEFAULT '',
		link_token      TEXT,
		link_expires_at BIGINT NOT NULL DEFAULT 0,
		error           TEXT NOT NULL DEFAULT '',
		mailed_at       BIGINT NOT NULL DEFAULT 0,
		created_at      BIGINT NOT NULL,
		paid_at         BIGINT NOT NULL DEFAULT 0,
		done_at         BIGINT NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX orders_session ON orders(session_id);
	CREATE UNIQUE INDEX orders_link_token ON orders(link_token);
	CREATE INDEX orders_status_created ON orders(status, created_at);
	CREATE TABLE webhook_events (
		id          TEXT PRIMARY KEY,
		type        TEXT NOT NULL,
		received_at BIGINT NOT NULL
	);`,
	`CREATE TABLE uploads (
		id          TEXT PRIMARY KEY,
		file_name   TEXT NOT NULL,
		size        BIGINT NOT NULL,
		duration_ms BIGINT NOT NULL,
		order_id    TEXT NOT NULL DEFAULT '',
		created_at  BIGINT NOT NULL
	);
	CREATE INDEX uploads_created ON uploads(created_at);`,
	// The page's order key: one key, one payment (desk_key.go). At most one checkout of a key
	// may be open at a time, and at most one order of a key is paid.
	`ALTER TABLE orders ADD COLUMN order_key TEXT;
	CREATE UNIQUE INDEX orders_key_open ON orders(service, order_key)
		WHERE order_key IS NOT NULL AND status = 'awaiting_payment';
	CREATE INDEX orders_key ON orders(service, order_key) WHERE order_key IS NOT NULL;`,
	// Heartbeats of the nodes of a cluster (nodes.go).
	`CREATE TABLE nodes (
		id         TEXT PRIMARY KEY,
		started_at BIGINT NOT NULL,
		seen_at    BIGINT NOT NULL
	);`,
	// The admin area (operator.go): every operator action, once per form (once_key), and
	// the indexes its search uses (payment id, the address while it is kept).
	`CREATE TABLE admin_audit (
		id        TEXT PRIMARY KEY,
		once_key  TEXT NOT NULL,
		actor     TEXT NOT NULL,
		ip        TEXT NOT NULL,
		action    TEXT NOT NULL,
		order_id  TEXT NOT NULL DEFAULT '',
		detail    TEXT NOT NULL DEFAULT '',
		result    TEXT NOT NULL,
		at        BIGINT NOT NULL
	);
	CREATE UNIQUE INDEX admin_audit_once ON admin_audit(once_key);
	CREATE INDEX admin_audit_order ON admin_audit(order_id, at);
	CREATE INDEX admin_audit_at ON admin_audit(at);
	CREATE INDEX orders_payment_intent ON orders(payment_intent);
	CREATE INDEX orders_email ON orders(email);
	CREATE INDEX orders_service_created ON orders(service, created_at);
	CREATE INDEX orders_created ON orders(created_at);`,
	// The admin area's session secret (operator_session.go): random, made once, shared by
	// every node, replaced to sign every operator out.
	`CREATE TABLE admin_secrets (
		name       TEXT PRIMARY KEY,
		value      TEXT NOT NULL,
		created_at BIGINT NOT NULL
	);`,
	// The client address an upload came from: unpaid uploads are bounded per address
	// (quota.go).
	`ALTER TABLE uploads ADD COLUMN client TEXT NOT NULL DEFAULT '';`,
	// Exactly once (claim.go): the runner's claim on the order (its fence) and the node
	// holding it, the mark that its result was erased for good, the count of the visitor's
	// saved edits, and the claim of its letter.
	`ALTER TABLE orders ADD COLUMN claim BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
	ALTER TABLE orders ADD COLUMN erased BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN edits BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN mail_claimed_at BIGINT NOT NULL DEFAULT 0;`,
	// The version of a transcript's text: rendered downloads are cached under it
	// (results_edit.go: EditVersion).
	`ALTER TABLE orders ADD COLUMN edit_version BIGINT NOT NULL DEFAULT 0;`,
	// The runs of an order's fulfilment, counted when each takes its claim: a run its
	// node's death ended counts too (fence.go), so an order that kills its node is given
	// up after the attempt limit.
	`ALTER TABLE orders ADD COLUMN runs BIGINT NOT NULL DEFAULT 0;`,
	// The file of the visitor's edit, beside the result: each save writes a file of its
	// own, and the save that wins the order's version points the row to it
	// (results_edit.go). Edits saved before are the old fixed name.
	`ALTER TABLE orders ADD COLUMN edit_name TEXT NOT NULL DEFAULT '';
	UPDATE orders SET edit_name = 'edited.json' WHERE edits > 0;`,
	// When a failed order's refund went to the payment provider (fence.go: refundSending):
	// from then on the operator's Retry is refused, or the order could be refunded and
	// delivered.
	`ALTER TABLE orders ADD COLUMN refund_sent_at BIGINT NOT NULL DEFAULT 0;`,
	// The claim that marked the refund as sent (refund_sent_at): only it may take the mark
	// back (fence.go: refundRefused), a later claim's refusal says nothing of its refund.
	`ALTER TABLE orders ADD COLUMN refund_claim BIGINT NOT NULL DEFAULT 0;`,
	// The letter's certain failures (letter.go): when a send last certainly did not leave
	// (its claim given back: resendLetters tries again after a while), and when the mail
	// server refused it for good (a 5xx reply: not sent again by itself, the operator told).
	`ALTER TABLE orders ADD COLUMN mail_failed_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN mail_rejected_at BIGINT NOT NULL DEFAULT 0;`,
}

func migrate(ctx context.Context, db *sqldb.DB) error {
	return db.Migrate(ctx, "schema_migrations", migrations)
}

// The order book's timestamps are Unix milliseconds, 0 for none (sqldb's rule).
var millis, fromMillis = sqldb.Millis, sqldb.FromMillis

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
