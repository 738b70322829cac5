package sqldb

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// SQLite syncs its log at every commit (synchronous=FULL, 2): with NORMAL (1), a power
// cut could roll back a mark (the letter's claim, refund_sent_at) after its letter or
// refund left, and it would be sent again.
func TestSQLiteSyncsEveryCommit(t *testing.T) {
	db, err := OpenSQLite(filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var synchronous, journal string
	if err := db.QueryRow(`PRAGMA synchronous`).Scan(&synchronous); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&journal); err != nil {
		t.Fatal(err)
	}
	if synchronous != "2" || journal != "wal" {
		t.Errorf("synchronous = %s, journal_mode = %s; want 2 (FULL) and wal", synchronous, journal)
	}
}

// BenchmarkSQLiteSynchronous measures what FULL costs against NORMAL on the order book's
// two commits of a paid order: it is recorded (an insert), then claimed by its run (a
// fenced update naming the claim, RETURNING it). Run both in one run:
//
//	go test -run x -bench SQLiteSynchronous -count 5 ./providers/sqldb/
func BenchmarkSQLiteSynchronous(b *testing.B) {
	for _, mode := range []string{"NORMAL", "FULL"} {
		b.Run(mode, func(b *testing.B) {
			db, err := openSQLite(filepath.Join(b.TempDir(), "app.db"), mode)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL,
				claim BIGINT NOT NULL DEFAULT 0, paid_at BIGINT NOT NULL)`); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				id := fmt.Sprintf("ord_%d", i)
				if _, err := db.ExecContext(ctx, `INSERT INTO orders (id, status, paid_at) VALUES (?, 'paid', ?)`, id, i); err != nil {
					b.Fatal(err)
				}
				var claim int64
				if err := db.QueryRowContext(ctx, `UPDATE orders SET status = 'processing', claim = claim + 1
					WHERE id = ? AND status = 'paid' RETURNING claim`, id).Scan(&claim); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
		})
	}
}
