// Package sqldb opens the app's database, SQLite in DATA_DIR or PostgreSQL at
// DATABASE_URL, behind one type, and holds every difference between the two: how to
// connect, placeholders ("?" in the code, "$1" on Postgres), column types in migrations,
// JSON access, locks around migrations, and which errors mean "the database is away".
// Callers write one SQL text for both.
package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// Dialect is the database behind a DB.
type Dialect int

const (
	SQLite Dialect = iota
	Postgres
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// DB is the app's database. Its ExecContext, QueryContext, QueryRowContext, Exec and
// BeginTx take SQL written with "?" placeholders on either dialect.
type DB struct {
	*sql.DB
	Dialect Dialect
	// Pool is the pgx pool behind DB on Postgres (River's driver wants it); nil on SQLite.
	Pool *pgxpool.Pool
	// lock is SQLite's lock file, held open (and so locked) until Close; nil on Postgres.
	lock *os.File
}

// OpenSQLite opens a SQLite database with the settings River and the store need: WAL, a
// busy timeout, immediate write transactions and a single connection. One process may
// hold it (lockSQLite): ErrInUse while another does.
//
// synchronous=FULL syncs the log at every commit: with NORMAL, WAL's default, a power cut
// may roll back the last commits, among them a mark written just before its effect left
// the process (the letter's claim before the letter, refund_sent_at before the refund),
// which would then be sent again. Its cost is measured by BenchmarkSQLiteSynchronous.
func OpenSQLite(path string) (*DB, error) {
	return openSQLite(path, "FULL")
}

// openSQLite is OpenSQLite with the synchronous setting given (the benchmark compares).
func openSQLite(path, synchronous string) (*DB, error) {
	lock, err := lockSQLite(path)
	if err != nil {
		return nil, err
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)" +
		"&_pragma=synchronous(" + synchronous + ")&_pragma=foreign_keys(ON)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err == nil {
		db.SetMaxOpenConns(1)
		if err = db.Ping(); err != nil {
			db.Close()
		}
	}
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return &DB{DB: db, Dialect: SQLite, lock: lock}, nil
}

// DefaultMaxConns is PostgresConfig.MaxConns's default (and DB_MAX_CONNS's): connections
// to PostgreSQL per node.
const DefaultMaxConns = 20

// PostgresConfig tunes the connection pool.
type PostgresConfig struct {
	MaxConns int32 // 0: DefaultMaxConns
	// ConnectTimeout bounds the first connection at boot (0: 10 s).
	ConnectTimeout time.Duration
}

// OpenPostgres connects to the PostgreSQL server named by a postgres:// URL. Errors name
// the server but never the password.
func OpenPostgres(ctx context.Context, databaseURL string, cfg PostgresConfig) (*DB, error) {
	where := Redact(databaseURL)
	pc, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL %s is not a valid postgres URL: %v", where, scrub(err, databaseURL))
	}
	pc.MaxConns = cfg.MaxConns
	if pc.MaxConns == 0 {
		pc.MaxConns = DefaultMaxConns
	}
	// A connection unused for a while is closed; one broken by a restart of the server
	// is dropped at its next use and the request after it gets a new one.
	pc.MaxConnIdleTime = time.Minute
	pc.HealthCheckPeriod = 15 * time.Second
	timeout := cfg.ConnectTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	pc.ConnConfig.ConnectTimeout = timeout
	// A frozen node's open transaction or row lock must not block the node taking its
	// orders over for longer than the heartbeat's death timeout (10 s): the server ends
	// a transaction left idle, and a statement gives up waiting for a lock, after 5 s.
	// The URL may set its own.
	for name, value := range map[string]string{"lock_timeout": "5s", "idle_in_transaction_session_timeout": "5s"} {
		if _, set := pc.ConnConfig.RuntimeParams[name]; !set {
			pc.ConnConfig.RuntimeParams[name] = value
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL %s: %v", where, scrub(err, databaseURL))
	}
	pingCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("DATABASE_URL %s cannot be reached: %v", where, scrub(err, databaseURL))
	}
	return &DB{DB: stdlib.OpenDBFromPool(pool), Dialect: Postgres, Pool: pool}, nil
}

// Close closes the database (and the pool behind it, or SQLite's lock).
func (db *DB) Close() error {
	err := db.DB.Close()
	if db.Pool != nil {
		db.Pool.Close()
	}
	if db.lock != nil {
		err = errors.Join(err, db.lock.Close())
	}
	return err
}

// Redact returns a database URL without its password, for logs and errors.
func Redact(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || u.Host == "" {
		return "(unparsable)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	u.RawQuery = ""
	return u.Redacted()
}

// scrub removes the password from an error text that may quote the URL.
func scrub(err error, databaseURL string) string {
	msg := err.Error()
	if u, perr := url.Parse(databaseURL); perr == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// Rebind turns "?" placeholders into "$1", "$2"… on Postgres. A "?" inside a quoted
// string or identifier is left alone.
func (d Dialect) Rebind(q string) string {
	if d != Postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// JSONText is the SQL expression for the text of a top-level key of a JSON column (TEXT
// or jsonb).
func (d Dialect) JSONText(column, key string) string {
	if d == Postgres {
		return "(" + column + "::jsonb->>'" + key + "')"
	}
	return "json_extract(" + column + ", '$." + key + "')"
}

// ExecContext runs a statement written with "?" placeholders.
func (db *DB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := db.DB.ExecContext(ctx, db.Dialect.Rebind(q), args...)
	return res, mark(err)
}

// Exec runs a statement written with "?" placeholders.
func (db *DB) Exec(q string, args ...any) (sql.Result, error) {
	res, err := db.DB.Exec(db.Dialect.Rebind(q), args...)
	return res, mark(err)
}

// QueryContext runs a query written with "?" placeholders.
func (db *DB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	rows, err := db.DB.QueryContext(ctx, db.Dialect.Rebind(q), args...)
	return rows, mark(err)
}

// QueryRowContext runs a one-row query written with "?" placeholders.
func (db *DB) QueryRowContext(ctx context.Context, q string, args ...any) *Row {
	return &Row{db.DB.QueryRowContext(ctx, db.Dialect.Rebind(q), args...)}
}

// BeginTx starts a transaction whose statements take "?" placeholders.
func (db *DB) BeginTx(ctx context.Context, opts *sql.TxOptions) (*Tx, error) {
	tx, err := db.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, mark(err)
	}
	return &Tx{Tx: tx, d: db.Dialect}, nil
}

// Row is the result of QueryRowContext; its errors are marked like DB's.
type Row struct{ row *sql.Row }

// Scan copies the row's columns into dest (sql.ErrNoRows when there is none).
func (r *Row) Scan(dest ...any) error { return mark(r.row.Scan(dest...)) }

// Err reports the query's error.
func (r *Row) Err() error { return mark(r.row.Err()) }

// Tx is a transaction of a DB.
type Tx struct {
	*sql.Tx
	d Dialect
}

// ExecContext runs a statement written with "?" placeholders.
func (tx *Tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := tx.Tx.ExecContext(ctx, tx.d.Rebind(q), args...)
	return res, mark(err)
}

// QueryContext runs a query written with "?" placeholders.
func (tx *Tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	rows, err := tx.Tx.QueryContext(ctx, tx.d.Rebind(q), args...)
	return rows, mark(err)
}

// QueryRowContext runs a one-row query written with "?" placeholders.
func (tx *Tx) QueryRowContext(ctx context.Context, q string, args ...any) *Row {
	return &Row{tx.Tx.QueryRowContext(ctx, tx.d.Rebind(q), args...)}
}

// Commit commits the transaction.
func (tx *Tx) Commit() error { return mark(tx.Tx.Commit()) }

// unavailableError is a database error that means the database cannot be reached now.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return "database unavailable: " + e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// mark wraps err with ErrUnavailable when it says the database is away, so that callers
// far from here (the API's error table) can tell an outage from a bad query.
func mark(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || !Unavailable(err) {
		return err
	}
	return &unavailableError{err}
}

// Locked runs fn while holding the database-wide lock named by key, so that nodes starting
// together do not migrate at once. SQLite has one process per file: fn just runs.
func (db *DB) Locked(ctx context.Context, key string, fn func() error) error {
	if db.Dialect != Postgres {
		return fn()
	}
	conn, err := db.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("locking %s: %w", key, err)
	}
	defer conn.Close()
	// Waiting for another node's migration may take longer than lock_timeout allows.
	if _, err := conn.ExecContext(ctx, `SET lock_timeout = 0`); err != nil {
		return fmt.Errorf("locking %s: %w", key, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `RESET lock_timeout`)
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext($1))`, key); err != nil {
		return fmt.Errorf("locking %s: %w", key, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext($1))`, key)
	return fn()
}

// Migrate applies the migrations not applied yet, each once and in order, under a lock.
// The versions are recorded in table (one per set of migrations).
func (db *DB) Migrate(ctx context.Context, table string, migrations []string) error {
	return db.Locked(ctx, "migrate "+table, func() error {
		if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (version BIGINT PRIMARY KEY)`); err != nil {
			return fmt.Errorf("creating %s: %w", table, err)
		}
		for i, m := range migrations {
			if err := db.migrateOne(ctx, table, i+1, m); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		return nil
	})
}

func (db *DB) migrateOne(ctx context.Context, table string, version int, m string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE version = ?`, version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (version) VALUES (?)`, version); err != nil {
		return err
	}
	return tx.Commit()
}

// ErrUnavailable marks an error that means the database cannot be reached now (down,
// restarting, out of connections), as opposed to a bad query or a missing row.
var ErrUnavailable = errors.New("database unavailable")

// Unavailable reports whether err means the database cannot be reached now (the server
// down, restarting or out of connections, the network cut), so that a request answers
// 503 and a job is retried, rather than a bad query or a missing row.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01–57P03: shutting down, cannot connect now;
		// 53300: too many connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" ||
			pe.Code == "57P03" || pe.Code == "53300"
	}
	return pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed") ||
		strings.Contains(err.Error(), "failed to connect")
}
