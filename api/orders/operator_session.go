package orders

import (
	"context"
	"fmt"
)

// The admin area signs its session cookies with a key of its own: random, made by the first
// node that needs it and kept in the database, so every node of a cluster shares it and no
// configured secret (a password hash in an env file) can be turned into a session.
// Replacing it signs every operator out.

// sessionSecretName is the row of admin_secrets holding the session secret.
const sessionSecretName = "session"

// SessionSecret is the admin area's session secret, made on first use: when two nodes make
// one at once, the first stored wins and both read it.
func (op *Operator) SessionSecret(ctx context.Context) (string, error) {
	db := op.book.orders.db
	if _, err := db.ExecContext(ctx, `INSERT INTO admin_secrets (name, value, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, sessionSecretName, randomString(32), millis(op.book.cfg.Now())); err != nil {
		return "", fmt.Errorf("making the admin session secret: %w", err)
	}
	var v string
	if err := db.QueryRowContext(ctx, `SELECT value FROM admin_secrets WHERE name = ?`, sessionSecretName).Scan(&v); err != nil {
		return "", fmt.Errorf("reading the admin session secret: %w", err)
	}
	return v, nil
}

// SignEveryoneOut replaces the session secret, so that every session cookie signed so far
// is refused on every node (once each has read the new one); audited as sign_out_everyone.
func (op *Operator) SignEveryoneOut(ctx context.Context, by Actor) (Outcome, error) {
	return op.act(ctx, by, "sign_out_everyone", "", "", func(string) (string, error) {
		err := execRow(ctx, op.book.orders.db, "replacing the admin session secret",
			`INSERT INTO admin_secrets (name, value, created_at) VALUES (?, ?, ?)
			 ON CONFLICT (name) DO UPDATE SET value = excluded.value, created_at = excluded.created_at`,
			sessionSecretName, randomString(32), millis(op.book.cfg.Now()))
		return "every session signed out", err
	})
}
