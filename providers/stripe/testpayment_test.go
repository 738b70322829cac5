package stripe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"parla/providers"
)

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
	tc, s := openSession(t, "ord_1")
	ctx := context.Background()
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
			if got, _ := tc.Get(ctx, created.ID); got.ClosedEarly {
				t.Error("a session that ran out of time reads as replaced")
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

// A session closed by ExpireCheckout (a newer checkout of the order replaced it) is expired
// and says it was closed early, so its page can tell the visitor why.
func TestTestCheckoutClosedEarly(t *testing.T) {
	tc, created := openSession(t, "ord_replaced")
	ctx := context.Background()
	if s, _ := tc.Get(ctx, created.ID); s.ClosedEarly {
		t.Fatal("an open session reads as closed early")
	}
	if _, err := tc.ExpireCheckout(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	s, err := tc.Get(ctx, created.ID)
	if err != nil || s.Status != "expired" || !s.ClosedEarly {
		t.Fatalf("after ExpireCheckout: %+v, %v", s, err)
	}
	if _, err := tc.Pay(ctx, created.ID); !errors.Is(err, ErrSessionExpired) {
		t.Errorf("Pay of a replaced session = %v, want ErrSessionExpired", err)
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
		{"another key for a refunded intent fails", pi1, "refund-ord_1-again", true, 1},
		{"key reused for another intent fails", pi2, "refund-ord_1", true, 1},
		{"second intent is refunded", pi2, "refund-ord_2", false, 2},
		{"unknown intent fails", "pi_test_nope", "refund-x", true, 2},
		{"empty intent fails", "", "refund-y", true, 2},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			c.advance(time.Second) // "oldest first" is by the second
			err := tc.Refund(ctx, st.intent, st.key)
			if (err != nil) != st.wantErr {
				t.Fatalf("Refund(%q, %q) = %v, want error %v", st.intent, st.key, err, st.wantErr)
			}
			if twice := st.key == "refund-ord_1-again"; errors.Is(err, ErrRefundedTwice) != twice {
				t.Errorf("Refund(%q, %q) = %v; ErrRefundedTwice %v, want %v", st.intent, st.key, err, !twice, twice)
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
	// Every call is kept, whatever its answer: a second refund is seen, never absorbed.
	for intent, want := range map[string][]string{
		pi1: {"refund-ord_1", "refund-ord_1", "refund-ord_1-again"},
		pi2: {"refund-ord_1", "refund-ord_2"}, "pi_test_nope": {"refund-x"},
	} {
		calls, err := tc.RefundCalls(ctx, intent)
		var keys []string
		for _, c := range calls {
			keys = append(keys, c.IdempotencyKey)
		}
		if err != nil || !slices.Equal(keys, want) {
			t.Errorf("RefundCalls(%s) = %v, %v; want the keys %v", intent, keys, err, want)
		}
	}
	for intent, want := range map[string]bool{pi1: true, pi2: true, "pi_test_nope": false} {
		if got, err := tc.RefundedIntent(ctx, intent); err != nil || got != want {
			t.Errorf("RefundedIntent(%s) = %v, %v; want %v", intent, got, err, want)
		}
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

// Refunds of one payment racing: under one idempotency key every call answers as the first
// (one refund); under different keys one refunds and every other one fails with
// ErrRefundedTwice, as the simulation's "at most one refund per payment" needs to see.
func TestTestCheckoutConcurrentRefunds(t *testing.T) {
	for _, sameKey := range []bool{true, false} {
		t.Run(fmt.Sprintf("same key %v", sameKey), func(t *testing.T) {
			tc, c := newTestCheckout(t)
			ctx := context.Background()
			s, err := tc.CreateCheckout(ctx, testRequest(c, "ord_1"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tc.Pay(ctx, s.ID); err != nil {
				t.Fatal(err)
			}
			paid, _ := tc.GetCheckout(ctx, s.ID)
			const n = 8
			errs := make(chan error, n)
			for i := range n {
				key := "refund-ord_1"
				if !sameKey {
					key = fmt.Sprintf("refund-ord_1-%d", i)
				}
				go func() { errs <- tc.Refund(ctx, paid.PaymentIntent, key) }()
			}
			ok, twice := 0, 0
			for range n {
				switch err := <-errs; {
				case err == nil:
					ok++
				case errors.Is(err, ErrRefundedTwice):
					twice++
				default:
					t.Errorf("Refund: %v", err)
				}
			}
			refunds, _ := tc.Refunds(ctx)
			calls, _ := tc.RefundCalls(ctx, paid.PaymentIntent)
			wantOK := 1
			if sameKey {
				wantOK = n
			}
			if ok != wantOK || twice != n-wantOK || len(refunds) != 1 || len(calls) != n {
				t.Errorf("%d answered done, %d refunded twice, %d refunds, %d calls; want %d, %d, 1, %d",
					ok, twice, len(refunds), len(calls), wantOK, n-wantOK, n)
			}
		})
	}
}
