package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"golang.org/x/crypto/bcrypt"

	"parla/api"
	"parla/api/admin"
	"parla/api/credit"
	"parla/api/health"
	"parla/api/orders"
)

// minAdminToken is the shortest ADMIN_TOKEN accepted: 32 characters of a random token
// cannot be guessed through a rate-limited door.
const minAdminToken = 32

// adminErrors checks the admin area's secrets: a token and a session key long enough, a
// hash bcrypt reads.
func adminErrors(hash, token, sessionKey string) []error {
	var errs []error
	if sessionKey != "" && len(sessionKey) < minAdminToken {
		errs = append(errs, fmt.Errorf("ADMIN_SESSION_KEY: must be at least %d characters (for example: openssl rand -base64 32)", minAdminToken))
	}
	if token != "" && len(token) < minAdminToken {
		errs = append(errs, fmt.Errorf("ADMIN_TOKEN: must be at least %d characters (try: openssl rand -base64 32)", minAdminToken))
	}
	if hash != "" {
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			errs = append(errs, errors.New("ADMIN_PASSWORD_HASH: not a bcrypt hash; make one with `parla hash-password`"))
		}
	}
	return errs
}

// hashPassword is `parla hash-password`: it reads a password from the first line of
// stdin and prints its bcrypt hash for ADMIN_PASSWORD_HASH.
func hashPassword(stdin io.Reader, stdout, stderr io.Writer) int {
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "parla hash-password: reading the password: %v\n", err)
		return 1
	}
	password := strings.TrimRight(line, "\r\n")
	if len(password) < 12 || len(password) > 72 {
		fmt.Fprintln(stderr, "parla hash-password: the password must be 12 to 72 bytes long (bcrypt reads no more)")
		return 2
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), 12)
	if err != nil {
		fmt.Fprintf(stderr, "parla hash-password: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, string(hash))
	return 0
}

// newAdmin builds the admin area, with River's UI over the queue's client when it is open.
func newAdmin(ctx context.Context, cfg Config, book *orders.Book, keys *credit.Keyring, log *slog.Logger) (*admin.Admin, error) {
	ac := admin.Config{PasswordHash: cfg.AdminPasswordHash, Token: cfg.AdminToken, SessionKey: cfg.AdminSessionKey,
		Engines: cfg.Engines(),
		Closed: func() map[orders.Service]string {
			return health.ReasonsByService(closedEngines(cfg, book.Desk.Available))
		},
		ClientIP: api.ClientIP(cfg.TrustedProxies), SecureCookies: strings.HasPrefix(cfg.PublicURL, "https://"),
		Keys: keys, Log: log.With("component", "admin")}
	if cfg.AdminPasswordHash != "" || cfg.AdminToken != "" {
		jobs, err := jobsUI(ctx, book.RiverClient(), log.With("component", "riverui"))
		if err != nil {
			return nil, err
		}
		ac.Jobs = jobs
	}
	return admin.New(ac, book.Operator()), nil
}

// jobsUI builds River's UI over the queue's client, whose type follows the database.
func jobsUI(ctx context.Context, client any, log *slog.Logger) (http.Handler, error) {
	switch c := client.(type) {
	case *river.Client[*sql.Tx]:
		return admin.NewJobsUI(ctx, c, log)
	case *river.Client[pgx.Tx]:
		return admin.NewJobsUI(ctx, c, log)
	}
	return nil, fmt.Errorf("River's UI: unknown queue client %T", client)
}
