package admin

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// BenchmarkAdminSearchHTTP is the admin search by order id over HTTP (handler, query,
// JSON or HTML) with 100,000 orders in SQLite; the target is under 20 ms. The baseline is
// the sign-in page, the same stack without the query.
func BenchmarkAdminSearchHTTP(b *testing.B) {
	f := newFixture(b, openConfig(b))
	const n = 100_000
	start := time.Now().Add(-90 * 24 * time.Hour).UnixMilli()
	if _, err := f.db.Exec(`WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
		INSERT INTO orders (id, service, status, params, email, locale, amount, currency, session_id,
			payment_intent, created_at, paid_at)
		SELECT 'ord' || i, 'tts', 'done', '{}', '', 'en', 99, 'eur', 'cs_' || i, 'pi_' || i, ? + i * 60000, ? + i * 60000 + 1000
		FROM seq`, n, start, start); err != nil {
		b.Fatal(err)
	}
	probe := fmt.Sprintf("ord%d", n/2)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	cookie, _ := f.signIn()
	if r := f.do("GET", "/admin/orders?state=delivered&q=ord"+fmt.Sprint(n), nil, auth); !strings.Contains(r.body, `"id":"ord`+fmt.Sprint(n)+`"`) {
		b.Fatalf("the last seeded order is not found: %s", r.body)
	}
	cases := []struct {
		name, path string
		header     map[string]string
	}{
		{"baseline_sign_in_page", "/admin/sign-in", nil},
		{"by_order_id_json", "/admin/orders?q=" + url.QueryEscape(probe), auth},
		{"by_order_id_html", "/admin/orders?q=" + url.QueryEscape(probe), map[string]string{"Cookie": cookie}},
		{"by_payment_id_json", "/admin/orders?q=pi_" + fmt.Sprint(n/3), auth},
		{"delivered_newest_50_json", "/admin/orders?state=delivered", auth},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if r := f.do("GET", c.path, nil, c.header); r.status != 200 {
					b.Fatalf("%d %s", r.status, r.body)
				}
			}
		})
	}
}
