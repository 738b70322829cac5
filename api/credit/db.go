package credit

import "parla/providers/sqldb"

// migrations are applied in order, each once; append, never edit. The same SQL runs on
// SQLite and Postgres (providers/sqldb): BIGINT for numbers (times in unix milliseconds,
// money in thousandths of a cent), TEXT for the rest.
var migrations = []string{
	// A key is born with its purchase (awaiting_payment) and becomes active when paid.
	// key_hash is the SHA-256 of the secret; key_sealed the secret sealed (sealer) until
	// it was shown (shown_at) and its letter's fate is known (mail_state: letter.go).
	`CREATE TABLE credit_keys (
		id              TEXT PRIMARY KEY,
		status          TEXT NOT NULL,
		session_id      TEXT,
		payment_intent  TEXT NOT NULL DEFAULT '',
		amount          BIGINT NOT NULL,
		currency        TEXT NOT NULL,
		email           TEXT NOT NULL DEFAULT '',
		locale          TEXT NOT NULL DEFAULT 'en',
		key_hash        TEXT,
		key_sealed      TEXT NOT NULL DEFAULT '',
		key_last4       TEXT NOT NULL DEFAULT '',
		balance         BIGINT NOT NULL DEFAULT 0,
		calls           BIGINT NOT NULL DEFAULT 0,
		created_at      BIGINT NOT NULL,
		paid_at         BIGINT NOT NULL DEFAULT 0,
		expires_at      BIGINT NOT NULL DEFAULT 0,
		shown_at        BIGINT NOT NULL DEFAULT 0,
		mail_claimed_at BIGINT NOT NULL DEFAULT 0,
		mail_state      TEXT NOT NULL DEFAULT '',
		revoked_at      BIGINT NOT NULL DEFAULT 0,
		refunded        BIGINT NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX credit_keys_session ON credit_keys(session_id);
	CREATE UNIQUE INDEX credit_keys_hash ON credit_keys(key_hash);
	CREATE INDEX credit_keys_created ON credit_keys(created_at);
	CREATE TABLE credit_calls (
		id          TEXT PRIMARY KEY,
		key_id      TEXT NOT NULL,
		idem        TEXT,
		fingerprint TEXT NOT NULL DEFAULT '',
		model       TEXT NOT NULL,
		units       BIGINT NOT NULL,
		amount      BIGINT NOT NULL,
		state       TEXT NOT NULL,
		created_at  BIGINT NOT NULL,
		settled_at  BIGINT NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX credit_calls_idem ON credit_calls(key_id, idem);
	CREATE INDEX credit_calls_key ON credit_calls(key_id, state, created_at);
	CREATE TABLE credit_secrets (
		name       TEXT PRIMARY KEY,
		value      TEXT NOT NULL,
		created_at BIGINT NOT NULL
	);`,
	// repeats counts a settled call's free repeats under its Idempotency-Key (MaxRepeats).
	`ALTER TABLE credit_calls ADD COLUMN repeats BIGINT NOT NULL DEFAULT 0;`,
	// holder is the process that holds a call (Config.Holder), so that the reconciler
	// releases the holds of a dead one (ReleaseDead); gen counts the retakes of a released
	// row, so that a late Settle or Release of an earlier take changes nothing. held is the
	// key's total of held prices, on its row, so that a refund (held = 0) and a hold cannot
	// pass each other; it starts as the sum of the holds already there. The reconciler
	// reads the held calls of every key (credit_calls_state).
	`ALTER TABLE credit_calls ADD COLUMN holder TEXT NOT NULL DEFAULT '';
	ALTER TABLE credit_calls ADD COLUMN gen BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE credit_keys ADD COLUMN held BIGINT NOT NULL DEFAULT 0;
	CREATE INDEX credit_calls_state ON credit_calls(state, created_at);
	UPDATE credit_keys SET held = (SELECT COALESCE(SUM(amount), 0) FROM credit_calls
		WHERE key_id = credit_keys.id AND state = 'held');`,
	// A payment refunded or disputed at the provider finds its key (Shop.endPaid).
	`CREATE INDEX credit_keys_intent ON credit_keys(payment_intent);`,
	// A letter that certainly did not leave is sent again (letter.go): mail_tries counts its
	// sends, mail_failed_at is its last certain failure, from which the next waits.
	`ALTER TABLE credit_keys ADD COLUMN mail_tries BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE credit_keys ADD COLUMN mail_failed_at BIGINT NOT NULL DEFAULT 0;`,
}

var (
	millis     = sqldb.Millis
	fromMillis = sqldb.FromMillis
)
