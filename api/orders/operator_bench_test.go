package orders

import (
	"context"
	"fmt"
	"parla/providers/sqldb"
	"path/filepath"
	"testing"
	"time"
)

// benchOrders is the size the issue sets for the admin search: 100,000 orders.
const benchOrders = 100_000

// seedOrders fills a fresh database with n delivered, refunded and waiting orders and
// returns its store and one order's keys.
func seedOrders(b *testing.B, n int) (*Store, Order) {
	b.Helper()
	db, err := sqldb.OpenSQLite(filepath.Join(b.TempDir(), "parla.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if err := migrate(ctx, db); err != nil {
		b.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO orders (id, service, status, params, email, locale, amount,
		currency, session_id, payment_intent, created_at, paid_at) VALUES (?, ?, ?, '{}', ?, 'en', 99, 'eur', ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now().Add(-90 * 24 * time.Hour).UnixMilli()
	statuses := []Status{Done, Done, Done, Refunded, AwaitingPayment, Expired, Failed, Processing}
	services := []Service{TTS, STT, VTT}
	var probe Order
	for i := 0; i < n; i++ {
		o := Order{ID: newID(), Service: services[i%len(services)], Status: statuses[i%len(statuses)],
			SessionID: "cs_test_" + randomString(18), PaymentIntent: "pi_test_" + randomString(18)}
		email := ""
		if o.Status == AwaitingPayment {
			email = fmt.Sprintf("visitor%d@example.com", i)
		}
		created := start + int64(i)*60_000
		if _, err := stmt.ExecContext(ctx, o.ID, o.Service, o.Status, email, o.SessionID, o.PaymentIntent, created, created+1000); err != nil {
			b.Fatal(err)
		}
		if i == n/2 {
			probe = o
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return &Store{db: db}, probe
}

// BenchmarkAdminSearch is the admin area's search on 100,000 orders: by order id (the
// target: under 20 ms), by payment id, and a filtered list; Store.Get by id is the
// baseline, the lookup every page of the app already makes.
func BenchmarkAdminSearch(b *testing.B) {
	store, probe := seedOrders(b, benchOrders)
	ctx := context.Background()
	now := time.Now()
	cases := []struct {
		name string
		run  func() (int, error)
	}{
		{"baseline_get_by_id", func() (int, error) { _, err := store.Get(ctx, probe.ID); return 1, err }},
		{"by_order_id", func() (int, error) {
			o, err := store.search(ctx, Search{Query: probe.ID}, now, 2*time.Hour)
			return len(o), err
		}},
		{"by_session_id", func() (int, error) {
			o, err := store.search(ctx, Search{Query: probe.SessionID}, now, 2*time.Hour)
			return len(o), err
		}},
		{"by_payment_id", func() (int, error) {
			o, err := store.search(ctx, Search{Query: probe.PaymentIntent}, now, 2*time.Hour)
			return len(o), err
		}},
		{"failed_vtt_newest_50", func() (int, error) {
			o, err := store.search(ctx, Search{Service: VTT, Filter: FilterFailed}, now, 2*time.Hour)
			return len(o), err
		}},
		{"stuck_newest_50", func() (int, error) {
			o, err := store.search(ctx, Search{Filter: FilterStuck}, now, 2*time.Hour)
			return len(o), err
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				n, err := c.run()
				if err != nil || n == 0 {
					b.Fatalf("%d orders, %v", n, err)
				}
			}
		})
	}
}
