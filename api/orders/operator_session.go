package orders

import (
	"context"
	"fmt"
)

// The admin area signs its session cookies with a key of its own: random, made by the first
// node that needs it and kept in the database, so every node of a cluster shares it and no
// configured secret (a password hash in an env file) can be turned into a session.
// Replacing it signs every operator out. Device cookies (the mark a browser that signed in
// keeps, which lets it try a password during a flood) are signed under a second secret, so
// that signing everyone out leaves the operator's own browser a way in unless they are
// revoked too.

// The rows of admin_secrets: the session secret, and the device cookies' secret.
const (
	sessionSecretName = "session"
	deviceSecretName  = "device"
)

// SessionSecret is the admin area's session secret, made on first use: when two nodes make
// one at once, the first stored wins and both read it.
func (op *Operator) SessionSecret(ctx context.Context) (string, error) {
	return op.secret(ctx, sessionSecretName)
}

// DeviceSecret is the secret the admin area signs device cookies under, made on first use
// as SessionSecret is; only SignEveryoneOut with revokeDevices replaces it.
func (op *Operator) DeviceSecret(ctx context.Context) (string, error) {
	return op.secret(ctx, deviceSecretName)
}

func (op *Operator) secret(ctx context.Context, name string) (string, error) {
	db := op.book.orders.db
	if _, err := db.ExecContext(ctx, `INSERT INTO admin_secrets (name, value, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, randomString(32), millis(op.book.cfg.Now())); err != nil {
		return "", fmt.Errorf("making the admin %s secret: %w", name, err)
	}
	var v string
	if err := db.QueryRowContext(ctx, `SELECT value FROM admin_secrets WHERE name = ?`, name).Scan(&v); err != nil {
		return "", fmt.Errorf("reading the admin %s secret: %w", name, err)
	}
	return v, nil
}

// SignEveryoneOut replaces the session secret, so that every session cookie signed so far
// is refused on every node (once each has read the new one); with revokeDevices it replaces
// the device cookies' secret too. Audited as sign_out_everyone.
func (op *Operator) SignEveryoneOut(ctx context.Context, by Actor, revokeDevices bool) (Outcome, error) {
	detail, names, msg := "device cookies kept", []string{sessionSecretName}, "every session signed out"
	if revokeDevices {
		detail, names, msg = "device cookies revoked", []string{sessionSecretName, deviceSecretName}, "every session signed out, every device cookie revoked"
	}
	return op.act(ctx, by, "sign_out_everyone", "", detail, func(string) (string, error) {
		for _, name := range names {
			if err := op.book.orders.db.Update(ctx, "replacing the admin "+name+" secret",
				`INSERT INTO admin_secrets (name, value, created_at) VALUES (?, ?, ?)
				 ON CONFLICT (name) DO UPDATE SET value = excluded.value, created_at = excluded.created_at`,
				name, randomString(32), millis(op.book.cfg.Now())); err != nil {
				return "", err
			}
		}
		return msg, nil
	})
}
