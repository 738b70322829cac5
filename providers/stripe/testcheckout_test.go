package stripe

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"parla/providers"
	"parla/providers/sqldb"
	"parla/providers/testkit"
)

const publicURL = "https://parla.example"

// openDB opens a database the way the app does (SQLite, or Postgres with PARLA_TEST_DB).
func openDB(t *testing.T) *sqldb.DB { return testkit.OpenDB(t) }

func TestMain(m *testing.M) { os.Exit(testkit.RunWithDB(m)) }

// clock is a test clock the checkout reads through WithClock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestCheckout(t *testing.T) (*TestCheckout, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	tc, err := NewTestCheckout(openDB(t), publicURL+"/checkout/test", c.now)
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

// openSession is a new test checkout holding one open session, for orderID.
func openSession(t *testing.T, orderID string) (*TestCheckout, providers.CheckoutSession) {
	t.Helper()
	tc, c := newTestCheckout(t)
	s, err := tc.CreateCheckout(context.Background(), testRequest(c, orderID))
	if err != nil {
		t.Fatal(err)
	}
	return tc, s
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
	first, err := NewTestCheckout(db, publicURL+"/checkout/test/", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := first.CreateCheckout(context.Background(), testRequest(&clock{t: time.Now()}, "ord_1"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := NewTestCheckout(db, publicURL+"/checkout/test/", nil)
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
