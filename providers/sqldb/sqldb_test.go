package sqldb_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"parla/providers/sqldb"
	"parla/providers/testkit"
)

func TestRebind(t *testing.T) {
	cases := []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`a = ? AND b IN (?, ?)`, `a = $1 AND b IN ($2, $3)`},
		{`x = '?' AND y = ? AND "q?" = ?`, `x = '?' AND y = $1 AND "q?" = $2`},
		{`s = 'it''s ?' AND t = ?`, `s = 'it''s ?' AND t = $1`},
	}
	for _, c := range cases {
		if got := sqldb.Postgres.Rebind(c.in); got != c.want {
			t.Errorf("Rebind(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := sqldb.SQLite.Rebind(c.in); got != c.in {
			t.Errorf("SQLite changed %q to %q", c.in, got)
		}
	}
}

func TestRedact(t *testing.T) {
	got := sqldb.Redact("postgres://parla:s3cret-pw@db.internal:5432/parla?sslmode=require&password=other")
	if strings.Contains(got, "s3cret") || strings.Contains(got, "other") || !strings.Contains(got, "db.internal") {
		t.Errorf("Redact = %q", got)
	}
}

// TestOpenPostgresRefuses: a malformed or unreachable DATABASE_URL is refused with the
// variable named and no password in the message.
func TestOpenPostgresRefuses(t *testing.T) {
	free := testkit.FreePort(t)
	for _, u := range []string{
		"postgres://parla:hunter2-secret@" + free + "/parla?connect_timeout=2",
		"postgres://parla:hunter2-secret@[::1/parla",
		"postgres://parla:hunter2-secret@" + free + "/parla?sslmode=bogus",
	} {
		_, err := sqldb.OpenPostgres(context.Background(), u, sqldb.PostgresConfig{ConnectTimeout: 2e9})
		if err == nil {
			t.Fatalf("%s: opened", sqldb.Redact(u))
		}
		if msg := err.Error(); !strings.Contains(msg, "DATABASE_URL") || strings.Contains(msg, "hunter2") {
			t.Errorf("error %q: want DATABASE_URL named, no password", msg)
		}
	}
}

// TestMigrateBoth applies the same migrations on both dialects, twice, from racing
// callers on Postgres.
func TestMigrateBoth(t *testing.T) {
	migrations := []string{
		`CREATE TABLE things (id TEXT PRIMARY KEY, n BIGINT NOT NULL, doc TEXT NOT NULL DEFAULT '{}')`,
		`ALTER TABLE things ADD COLUMN note TEXT; CREATE INDEX things_n ON things(n);`,
	}
	for _, d := range openBoth(t) {
		t.Run(d.Dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			errs := make(chan error, 3)
			for range 3 {
				go func() { errs <- d.Migrate(ctx, "test_migrations", migrations) }()
			}
			for range 3 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if _, err := d.ExecContext(ctx, `INSERT INTO things (id, n, doc, note) VALUES (?, ?, ?, ?)`,
				"a", int64(1)<<40, `{"order_id":"o1"}`, "x?"); err != nil {
				t.Fatal(err)
			}
			var id string
			var n int64
			err := d.QueryRowContext(ctx, `SELECT id, n FROM things WHERE `+d.Dialect.JSONText("doc", "order_id")+` = ?`, "o1").Scan(&id, &n)
			if err != nil || id != "a" || n != 1<<40 {
				t.Errorf("got %q %d %v", id, n, err)
			}
			var versions int
			d.QueryRowContext(ctx, `SELECT COUNT(*) FROM test_migrations`).Scan(&versions)
			if versions != 2 {
				t.Errorf("%d versions recorded, want 2", versions)
			}
		})
	}
}

// TestUnavailable: a server that went away is told apart from a bad query.
func TestUnavailable(t *testing.T) {
	pg := testkit.StartPostgres(t)
	db, err := sqldb.OpenPostgres(context.Background(), pg.NewDatabase(t), sqldb.PostgresConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	_, err = db.ExecContext(ctx, `SELECT * FROM no_such_table`)
	if err == nil || sqldb.Unavailable(err) {
		t.Fatalf("bad query: %v, Unavailable = true", err)
	}
	pg.Down()
	_, err = db.ExecContext(ctx, `SELECT 1`)
	if !sqldb.Unavailable(err) {
		t.Fatalf("server down: %v, Unavailable = false", err)
	}
	pg.Up(t)
	var one int
	for range 3 { // the pool drops the broken connections it finds
		if err = db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err == nil {
			break
		}
	}
	if err != nil || one != 1 {
		t.Fatalf("after the server came back: %v", err)
	}
	if sqldb.Unavailable(errors.New("UNIQUE constraint failed")) {
		t.Error("a constraint error counted as unavailable")
	}
}

func openBoth(t *testing.T) []*sqldb.DB {
	t.Helper()
	lite, err := sqldb.OpenSQLite(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	pg := testkit.StartPostgres(t)
	pdb, err := sqldb.OpenPostgres(context.Background(), pg.NewDatabase(t), sqldb.PostgresConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pdb.Close() })
	return []*sqldb.DB{lite, pdb}
}
