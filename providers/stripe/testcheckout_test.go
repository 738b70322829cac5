package stripe

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"parla/providers"
)

const publicURL = "https://parla.example"

// openDB opens a database the way the app does: WAL, immediate transactions, one connection.
func openDB(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "parla.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// clock is a test clock the checkout reads through WithClock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestCheckout(t *testing.T) (*TestCheckout, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	tc, err := NewTestCheckout(openDB(t), publicURL+"/", WithClock(c.now))
	if err != nil {
		t.Fatalf("NewTestCheckout: %v", err)
	}
	return tc, c
}

func testRequest(c *clock, orderID string) providers.CheckoutRequest {
	return providers.CheckoutRequest{
		OrderID:     orderID,
		Email:       "a@example.com",
		Locale:      "es",
		Name:        "Text to speech",
		Description: "12 characters",
		Amount:      99,
		Currency:    "eur",
		SuccessURL:  publicURL + "/payment/success?session_id={CHECKOUT_SESSION_ID}",
		CancelURL:   publicURL + "/tts",
		ExpiresAt:   c.now().Add(time.Hour),
	}
}

func TestTestCheckoutPayFlow(t *testing.T) {
	tc, c := newTestCheckout(t)
	ctx := context.Background()

	created, err := tc.CreateCheckout(ctx, testRequest(c, "ord_1"))
	if err != nil {
		t.Fatalf("CreateCheckout: %v", err)
	}
	if !strings.HasPrefix(created.ID, "cs_test_") || len(created.ID) < len("cs_test_")+32 {
		t.Errorf("id %q does not look like a Stripe test session id", created.ID)
	}
	if created.URL != publicURL+"/checkout/test/"+created.ID {
		t.Errorf("URL = %q, want the test page under the public URL", created.URL)
	}
	want := providers.CheckoutSession{
		ID: created.ID, URL: created.URL, OrderID: "ord_1", Status: "open", PaymentStatus: "unpaid",
		Email: "a@example.com", AmountTotal: 99, Currency: "eur",
	}
	if created != want {
		t.Errorf("created =\n %+v\nwant\n %+v", created, want)
	}
	got, err := tc.GetCheckout(ctx, created.ID)
	if err != nil || got != want {
		t.Fatalf("GetCheckout = %+v, %v; want %+v", got, err, want)
	}
	if got.Paid() {
		t.Error("a new session reports paid")
	}

	c.advance(time.Minute)
	success, err := tc.Pay(ctx, created.ID)
	if err != nil {
		t.Fatalf("Pay: %v", err)
	}
	if wantURL := publicURL + "/payment/success?session_id=" + created.ID; success != wantURL {
		t.Errorf("Pay redirects to %q, want %q", success, wantURL)
	}
	paid, err := tc.GetCheckout(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if paid.Status != "complete" || paid.PaymentStatus != "paid" || !paid.Paid() ||
		!strings.HasPrefix(paid.PaymentIntent, "pi_test_") || paid.Name == "" {
		t.Errorf("after paying: %+v", paid)
	}
	s, err := tc.Get(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !s.PaidAt.Equal(c.now()) || s.Locale != "es" || s.Name != "Text to speech" {
		t.Errorf("Get = %+v", s)
	}

	again, err := tc.Pay(ctx, created.ID)
	if err != nil || again != success {
		t.Errorf("paying twice = %q, %v; want %q", again, err, success)
	}
	if p2, _ := tc.GetCheckout(ctx, created.ID); p2.PaymentIntent != paid.PaymentIntent {
		t.Errorf("paying twice changed the intent from %s to %s", paid.PaymentIntent, p2.PaymentIntent)
	}
	if _, err := tc.Cancel(ctx, created.ID); !errors.Is(err, ErrSessionPaid) {
		t.Errorf("Cancel of a paid session = %v, want ErrSessionPaid", err)
	}
	// Once paid, expiry no longer matters.
	c.advance(48 * time.Hour)
	if p3, _ := tc.GetCheckout(ctx, created.ID); p3.Status != "complete" {
		t.Errorf("paid session later reports %q", p3.Status)
	}
}

func TestTestCheckoutCancel(t *testing.T) {
	tc, c := newTestCheckout(t)
	ctx := context.Background()
	s, err := tc.CreateCheckout(ctx, testRequest(c, "ord_1"))
	if err != nil {
		t.Fatal(err)
	}
	cancel, err := tc.Cancel(ctx, s.ID)
	if err != nil || cancel != publicURL+"/tts" {
		t.Fatalf("Cancel = %q, %v; want the cancel URL", cancel, err)
	}
	// Like Stripe's back link, cancelling leaves the session open until it expires.
	if got, _ := tc.GetCheckout(ctx, s.ID); got.Status != "open" || got.Paid() {
		t.Errorf("after cancel: %+v", got)
	}
}

func TestTestCheckoutExpiry(t *testing.T) {
	tc, c := newTestCheckout(t)
	ctx := context.Background()

	cases := []struct {
		name      string
		expiresIn time.Duration // 0: unset
		wantLife  time.Duration
	}{
		{"requested expiry is kept", 2 * time.Hour, 2 * time.Hour},
		{"too short is clamped like Stripe", time.Minute, 31 * time.Minute},
		{"unset lasts a day", 0, 24*time.Hour - time.Minute},
	}
	for i, tcase := range cases {
		t.Run(tcase.name, func(t *testing.T) {
			req := testRequest(c, "ord_exp_"+string(rune('a'+i)))
			req.ExpiresAt = time.Time{}
			if tcase.expiresIn != 0 {
				req.ExpiresAt = c.now().Add(tcase.expiresIn)
			}
			created, err := tc.CreateCheckout(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			s, err := tc.Get(ctx, created.ID)
			if err != nil {
				t.Fatal(err)
			}
			if life := s.ExpiresAt.Sub(c.now()); life != tcase.wantLife {
				t.Errorf("session lives %s, want %s", life, tcase.wantLife)
			}

			start := c.now()
			t.Cleanup(func() { c.t = start })
			c.t = s.ExpiresAt.Add(-time.Second)
			if got, _ := tc.GetCheckout(ctx, created.ID); got.Status != "open" {
				t.Errorf("a second before expiry: status %q", got.Status)
			}
			c.t = s.ExpiresAt
			if got, _ := tc.GetCheckout(ctx, created.ID); got.Status != "expired" {
				t.Errorf("at expiry: status %q, want expired", got.Status)
			}
			if _, err := tc.Pay(ctx, created.ID); !errors.Is(err, ErrSessionExpired) {
				t.Errorf("Pay of an expired session = %v, want ErrSessionExpired", err)
			}
			if got, _ := tc.GetCheckout(ctx, created.ID); got.Paid() || got.PaymentIntent != "" {
				t.Errorf("expired session got paid: %+v", got)
			}
			if u, err := tc.Cancel(ctx, created.ID); err != nil || u != req.CancelURL {
				t.Errorf("Cancel of an expired session = %q, %v; want the cancel URL", u, err)
			}
		})
	}
}

func TestTestCheckoutSameOrderSameSession(t *testing.T) {
	tc, c := newTestCheckout(t)
	ctx := context.Background()
	first, err := tc.CreateCheckout(ctx, testRequest(c, "ord_1"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := tc.CreateCheckout(ctx, testRequest(c, "ord_1"))
	if err != nil || again.ID != first.ID {
		t.Errorf("second checkout for the same order = %s, %v; want %s", again.ID, err, first.ID)
	}
	other, err := tc.CreateCheckout(ctx, testRequest(c, "ord_2"))
	if err != nil || other.ID == first.ID {
		t.Errorf("checkout for another order = %s, %v; want a new session", other.ID, err)
	}
	// After Stripe's 24 hours the key is forgotten and a new session is made.
	c.advance(25 * time.Hour)
	later, err := tc.CreateCheckout(ctx, testRequest(c, "ord_1"))
	if err != nil || later.ID == first.ID {
		t.Errorf("checkout a day later = %s, %v; want a new session", later.ID, err)
	}
}

func TestTestCheckoutRefund(t *testing.T) {
	tc, c := newTestCheckout(t)
	ctx := context.Background()
	pay := func(order string) string {
		t.Helper()
		s, err := tc.CreateCheckout(ctx, testRequest(c, order))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tc.Pay(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		got, err := tc.GetCheckout(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.PaymentIntent
	}
	pi1, pi2 := pay("ord_1"), pay("ord_2")
	if _, err := tc.CreateCheckout(ctx, testRequest(c, "ord_unpaid")); err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name, intent, key string
		wantErr           bool
		wantRefunds       int
	}{
		{"first refund is recorded", pi1, "refund-ord_1", false, 1},
		{"same key again is a no-op", pi1, "refund-ord_1", false, 1},
		{"another key for a refunded intent is a no-op", pi1, "refund-ord_1-again", false, 1},
		{"key reused for another intent fails", pi2, "refund-ord_1", true, 1},
		{"second intent is refunded", pi2, "refund-ord_2", false, 2},
		{"unknown intent fails", "pi_test_nope", "refund-x", true, 2},
		{"empty intent fails", "", "refund-y", true, 2},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			err := tc.Refund(ctx, st.intent, st.key)
			if (err != nil) != st.wantErr {
				t.Fatalf("Refund(%q, %q) = %v, want error %v", st.intent, st.key, err, st.wantErr)
			}
			refunds, err := tc.Refunds(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(refunds) != st.wantRefunds {
				t.Errorf("%d refunds recorded, want %d: %+v", len(refunds), st.wantRefunds, refunds)
			}
		})
	}

	refunds, _ := tc.Refunds(ctx)
	if len(refunds) != 2 || refunds[0].PaymentIntent != pi1 || refunds[0].IdempotencyKey != "refund-ord_1" ||
		refunds[0].Amount != 99 || refunds[0].Currency != "eur" || !strings.HasPrefix(refunds[0].ID, "re_test_") {
		t.Errorf("refunds = %+v", refunds)
	}
	for intent, want := range map[string]bool{pi1: true, pi2: true, "pi_test_nope": false} {
		if got, err := tc.RefundedIntent(ctx, intent); err != nil || got != want {
			t.Errorf("RefundedIntent(%s) = %v, %v; want %v", intent, got, err, want)
		}
	}
}

func TestTestCheckoutUnknownSession(t *testing.T) {
	tc, _ := newTestCheckout(t)
	ctx := context.Background()
	calls := map[string]func(id string) error{
		"GetCheckout": func(id string) error { _, err := tc.GetCheckout(ctx, id); return err },
		"Get":         func(id string) error { _, err := tc.Get(ctx, id); return err },
		"Pay":         func(id string) error { _, err := tc.Pay(ctx, id); return err },
		"Cancel":      func(id string) error { _, err := tc.Cancel(ctx, id); return err },
		"EraseEmail":  func(id string) error { return tc.EraseEmail(ctx, id) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			for _, id := range []string{"cs_test_unknown", "", "' OR 1=1 --"} {
				if err := call(id); !errors.Is(err, providers.ErrSessionNotFound) {
					t.Errorf("%s(%q) = %v, want ErrSessionNotFound", name, id, err)
				}
			}
		})
	}
}

func TestTestCheckoutEraseEmail(t *testing.T) {
	tc, c := newTestCheckout(t)
	ctx := context.Background()
	s, err := tc.CreateCheckout(ctx, testRequest(c, "ord_1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.EraseEmail(ctx, s.ID); err != nil {
		t.Fatalf("EraseEmail: %v", err)
	}
	if got, _ := tc.GetCheckout(ctx, s.ID); got.Email != "" {
		t.Errorf("e-mail still %q", got.Email)
	}
	if err := tc.EraseEmail(ctx, s.ID); err != nil {
		t.Errorf("erasing twice: %v", err)
	}
}

func TestTestCheckoutRefusesBadRequests(t *testing.T) {
	tc, c := newTestCheckout(t)
	for name, change := range map[string]func(*providers.CheckoutRequest){
		"no order id":    func(r *providers.CheckoutRequest) { r.OrderID = "" },
		"zero amount":    func(r *providers.CheckoutRequest) { r.Amount = 0 },
		"no currency":    func(r *providers.CheckoutRequest) { r.Currency = "" },
		"no success URL": func(r *providers.CheckoutRequest) { r.SuccessURL = "" },
	} {
		t.Run(name, func(t *testing.T) {
			req := testRequest(c, "ord_bad")
			change(&req)
			if _, err := tc.CreateCheckout(context.Background(), req); err == nil {
				t.Error("CreateCheckout accepted the request")
			}
		})
	}
}

func TestNewTestCheckoutTwiceOnOneDatabase(t *testing.T) {
	db := openDB(t)
	first, err := NewTestCheckout(db, publicURL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := first.CreateCheckout(context.Background(), testRequest(&clock{t: time.Now()}, "ord_1"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := NewTestCheckout(db, publicURL)
	if err != nil {
		t.Fatalf("second NewTestCheckout on the same database: %v", err)
	}
	if _, err := second.GetCheckout(context.Background(), s.ID); err != nil {
		t.Errorf("session lost across restarts: %v", err)
	}
}

func TestRandomIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id, err := randomID("cs_test_", 40)
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != 48 || strings.Trim(id[8:], idAlphabet) != "" || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
}

func TestRenderPage(t *testing.T) {
	base := TestSession{
		ID: "cs_test_x", URL: publicURL + "/checkout/test/cs_test_x",
		Name: `Text <script>alert(1)</script>`, Amount: 99, Currency: "eur",
		SuccessURL: publicURL + "/payment/success?session_id=cs_test_x", CancelURL: publicURL + "/tts",
	}
	cases := []struct {
		status      string
		want, avoid []string
	}{
		{"open", []string{
			"TEST PAYMENT — no real card is charged", "0.99 €",
			`action="` + publicURL + `/checkout/test/cs_test_x/pay"`,
			`action="` + publicURL + `/checkout/test/cs_test_x/cancel"`,
			"&lt;script&gt;",
		}, []string{"<script>"}},
		{"complete", []string{"TEST PAYMENT", "is paid", `href="` + publicURL + `/payment/success?session_id=cs_test_x"`},
			[]string{"/pay\""}},
		{"expired", []string{"TEST PAYMENT", "expired", `href="` + publicURL + `/tts"`}, []string{"/pay\""}},
	}
	for _, tc := range cases {
		t.Run(tc.status, func(t *testing.T) {
			s := base
			s.Status = tc.status
			var b bytes.Buffer
			if err := RenderPage(&b, s); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(page, a) {
					t.Errorf("page contains %q", a)
				}
			}
		})
	}
}

func TestFormatAmount(t *testing.T) {
	for _, tc := range []struct {
		amount   int64
		currency string
		want     string
	}{
		{99, "eur", "0.99 €"},
		{198, "EUR", "1.98 €"},
		{12345, "usd", "123.45 $"},
		{5, "eur", "0.05 €"},
		{500, "jpy", "500 ¥"},
		{150, "chf", "1.50 CHF"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := FormatAmount(tc.amount, tc.currency); got != tc.want {
				t.Errorf("FormatAmount(%d, %q) = %q, want %q", tc.amount, tc.currency, got, tc.want)
			}
		})
	}
}

func TestTestCheckoutConcurrentPays(t *testing.T) {
	tc, c := newTestCheckout(t)
	ctx := context.Background()
	s, err := tc.CreateCheckout(ctx, testRequest(c, "ord_1"))
	if err != nil {
		t.Fatal(err)
	}
	// Every click sees the same payment intent: a second pay never replaces the first.
	type result struct {
		intent string
		err    error
	}
	results := make(chan result, 8)
	for range 8 {
		go func() {
			if _, err := tc.Pay(ctx, s.ID); err != nil {
				results <- result{err: err}
				return
			}
			got, err := tc.GetCheckout(ctx, s.ID)
			results <- result{got.PaymentIntent, err}
		}()
	}
	intents := map[string]bool{}
	for range 8 {
		r := <-results
		if r.err != nil {
			t.Errorf("Pay: %v", r.err)
			continue
		}
		intents[r.intent] = true
	}
	if len(intents) != 1 {
		t.Errorf("concurrent pays saw %d payment intents: %v", len(intents), intents)
	}
}
