package orders

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
)

func TestSearchSQL(t *testing.T) {
	now := time.UnixMilli(1_000_000_000).UTC()
	tests := []struct {
		name    string
		s       Search
		where   string
		args    int
		wantErr bool
	}{
		{"everything", Search{}, "", 0, false},
		{"text", Search{Query: " cs_1 "}, " WHERE (id = ? OR session_id = ? OR payment_intent = ? OR email = ?)", 4, false},
		{"service", Search{Service: STT}, " WHERE service = ?", 1, false},
		{"waiting", Search{Filter: FilterWaiting}, " WHERE status IN (?, ?)", 2, false},
		{"stuck", Search{Filter: FilterStuck}, " WHERE (status = ? AND paid_at != 0 AND paid_at < ? OR status IN (?, ?, ?) AND refund_sent_at != 0 AND refund_sent_at < ?)", 6, false},
		{"all three", Search{Query: "x", Service: TTS, Filter: FilterDelivered},
			" WHERE (id = ? OR session_id = ? OR payment_intent = ? OR email = ?) AND service = ? AND status = ?", 6, false},
		{"bad service", Search{Service: "fax"}, "", 0, true},
		{"bad filter", Search{Filter: "lost"}, "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			where, args, err := searchSQL(tt.s, now, time.Hour)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if where != tt.where || len(args) != tt.args {
				t.Errorf("got %q %v", where, args)
			}
		})
	}
	_, args, _ := searchSQL(Search{Filter: FilterStuck}, now, time.Hour)
	if args[1] != now.Add(-time.Hour).UnixMilli() {
		t.Errorf("stuck cutoff %v, want paid before now − job timeout", args[1])
	}
}

func TestExtendedExpiry(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	tests := []struct {
		name    string
		expires time.Time
		days    int
		want    time.Time
		ok      bool
	}{
		{"from the expiry", now.Add(5 * day), 3, now.Add(8 * day), true},
		{"lapsed: from now", now.Add(-5 * day), 3, now.Add(3 * day), true},
		{"capped", now.Add(55 * day), 30, now.Add(MaxLinkAhead), true},
		{"already at the cap", now.Add(MaxLinkAhead), 1, now.Add(MaxLinkAhead), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := extendedExpiry(tt.expires, now, tt.days)
			if !got.Equal(tt.want) || ok != tt.ok {
				t.Errorf("got %v %v, want %v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestOperatorSearchFindsAnOrderByEveryKey(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	op := f.book.Operator()
	o := f.delivered(t, "Find me.")
	waiting := f.order(t, "Not paid yet.")
	for _, q := range []string{o.ID, o.SessionID, o.PaymentIntent, "visitor@example.com"} {
		got, err := op.Search(ctx, Search{Query: q})
		if err != nil || len(got) != 1 {
			t.Errorf("search %q: %d orders, %v", q, len(got), err)
		}
	}
	if got, _ := op.Search(ctx, Search{Query: "visitor@example.com"}); len(got) == 1 && got[0].ID != waiting.OrderID {
		t.Errorf("the address finds %s, want the unpaid order that still keeps it", got[0].ID)
	}
	for filter, want := range map[Filter]string{FilterDelivered: o.ID, FilterWaiting: waiting.OrderID} {
		got, err := op.Search(ctx, Search{Filter: filter, Service: TTS})
		if err != nil || len(got) != 1 || got[0].ID != want {
			t.Errorf("filter %s: %v %v", filter, got, err)
		}
	}
	if got, _ := op.Search(ctx, Search{Filter: FilterFailed}); len(got) != 0 {
		t.Errorf("failed filter lists %d orders", len(got))
	}
	// Processing for longer than the job timeout (2 h by default) is stuck; a recent one is not.
	now := f.clock.Now()
	for id, paid := range map[string]time.Time{"stuck-order": now.Add(-3 * time.Hour), "busy-order": now.Add(-time.Minute)} {
		if _, err := f.deps.DB.Exec(`INSERT INTO orders (id, service, status, amount, currency, created_at, paid_at)
			VALUES (?, 'tts', 'processing', 99, 'eur', ?, ?)`, id, paid.UnixMilli(), paid.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := op.Search(ctx, Search{Filter: FilterStuck}); err != nil || len(got) != 1 || got[0].ID != "stuck-order" {
		t.Errorf("stuck filter: %v %v", got, err)
	}
}

func TestOperatorResendSendsOneMoreLetterOncePerForm(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	op := f.book.Operator()
	o := f.delivered(t, "Send it again.")
	by := Actor{Who: "password", IP: "192.0.2.1", Once: "form-1"}
	if _, err := op.Resend(ctx, by, o.ID, ""); !isRefused(err) {
		t.Errorf("resend without an address (erased at delivery): %v, want refused", err)
	}
	by.Once = "form-2"
	out, err := op.Resend(ctx, by, o.ID, "other@example.org")
	if err != nil || !strings.HasPrefix(out.Result, "ok:") {
		t.Fatalf("resend: %+v %v", out, err)
	}
	again, err := op.Resend(ctx, by, o.ID, "other@example.org")
	if err != nil || !again.Repeated || again.Result != out.Result {
		t.Errorf("the same form again: %+v %v", again, err)
	}
	mails := f.mails(t)
	if len(mails) != 2 {
		t.Fatalf("%d letters, want the delivery and one resent", len(mails))
	}
	resent := 0
	for _, m := range mails {
		if strings.Contains(m, "other@example.org") && strings.Contains(m, f.book.PageLink(o)) {
			resent++
		}
	}
	if resent != 1 {
		t.Errorf("%d letters to the typed address with the link, want 1", resent)
	}
	by.Once = "form-3"
	if _, err := op.Resend(ctx, by, o.ID, "not an address"); !isRefused(err) {
		t.Errorf("a bad address: %v", err)
	}
	audit, err := op.Audit(ctx, o.ID, 10)
	if err != nil || len(audit) != 3 {
		t.Fatalf("audit: %d entries, %v; want 3 (one per distinct form)", len(audit), err)
	}
	for _, e := range audit {
		if e.Action != "resend" || e.Actor != "password" || e.IP != "192.0.2.1" || e.Result == "started" || e.At.IsZero() {
			t.Errorf("audit entry %+v", e)
		}
		if strings.Contains(e.Detail+e.Result, "@") {
			t.Errorf("the audit log keeps an address: %+v", e)
		}
	}
}

func isRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

func TestOperatorRefundsOnceWhateverIsClicked(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	op := f.book.Operator()
	o := f.delivered(t, "Give the money back.")
	for i, once := range []string{"a", "b", "a"} {
		out, err := op.Refund(ctx, Actor{Who: "token", IP: "127.0.0.1", Once: once}, o.ID)
		if err != nil || !strings.HasPrefix(out.Result, "ok:") || out.Repeated != (i == 2) {
			t.Errorf("refund %d: %+v %v", i, out, err)
		}
	}
	refunds, err := f.test.Refunds(ctx)
	if err != nil || len(refunds) != 1 || refunds[0].PaymentIntent != o.PaymentIntent {
		t.Fatalf("refunds at the checkout: %+v %v", refunds, err)
	}
	defer func() {
		if refunds, _ := f.test.Refunds(ctx); len(refunds) != 2 {
			t.Errorf("%d refunds at the checkout, want one per order", len(refunds))
		}
	}()
	got, _ := op.Get(ctx, o.ID)
	if got.Status != Refunded {
		t.Errorf("status %s", got.Status)
	}
	if _, err := op.Retry(ctx, Actor{Who: "token", Once: "c"}, o.ID); !isRefused(err) {
		t.Errorf("retrying a refunded order: %v, want refused", err)
	}
	// A delivered order whose link lapsed and whose file was swept (expired, paid) is refunded too.
	swept := f.delivered(t, "Swept before the complaint.")
	if err := f.book.orders.DropResult(ctx, swept.ID); err != nil {
		t.Fatal(err)
	}
	if out, err := op.Refund(ctx, Actor{Who: "token"}, swept.ID); err != nil || !strings.HasPrefix(out.Result, "ok:") {
		t.Errorf("refunding a swept order: %+v %v", out, err)
	}
	if got, _ := op.Get(ctx, swept.ID); got.Status != Refunded {
		t.Errorf("swept order after refund: %s", got.Status)
	}
	unpaid := f.order(t, "Never paid.")
	if _, err := op.Refund(ctx, Actor{Who: "token"}, unpaid.OrderID); !isRefused(err) {
		t.Errorf("refunding an unpaid order: %v", err)
	}
}

func TestOperatorRetriesAFailedOrderUntilDelivered(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	op := f.book.Operator()
	hold := make(chan struct{})
	f.speaker.hold.Store(&hold)
	f.speaker.failures.Store(-1)
	co := f.order(t, "Fails, then works.")
	f.pay(t, co.SessionID)
	// The payment provider refuses the refund (as Stripe may for a while): the order stays
	// failed, which is what an operator finds and retries.
	if _, err := f.deps.DB.Exec(`UPDATE test_checkout_sessions SET payment_status = 'held' WHERE id = ?`, co.SessionID); err != nil {
		t.Fatal(err)
	}
	f.speaker.hold.Store(nil)
	close(hold)
	f.waitStatus(t, co.OrderID, Failed)
	// The refund job retries for hours (jobs.RefundAttempts); after six refusals its next
	// try is over half a second away, time for the operator's retry.
	testkit.Eventually(t, 10*time.Second, func() bool {
		attempts, err := op.book.queue.Attempts(ctx, co.OrderID)
		if err != nil {
			t.Fatal(err)
		}
		refused := 0
		for _, a := range attempts {
			if a.Job == "refund" && a.Error != "" {
				refused++
			}
		}
		return refused >= 6
	}, "six refused refunds")

	tl, err := op.Timeline(ctx, co.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	failures := 0
	for _, a := range tl.Attempts {
		if a.Job == "fulfil" && strings.Contains(a.Error, "engine exploded") {
			failures++
		}
	}
	// The last attempt gives up without an error for River (the refund takes over).
	if failures != 2 || len(tl.Attempts) < 4 {
		t.Errorf("timeline shows %d failed fulfil attempts, want 2 and the last: %+v", failures, tl.Attempts)
	}

	f.deps.DB.Exec(`UPDATE test_checkout_sessions SET payment_status = 'paid' WHERE id = ?`, co.SessionID)
	f.speaker.failures.Store(0)
	out, err := op.Retry(ctx, Actor{Who: "password", IP: "::1", Once: "r1"}, co.OrderID)
	if err != nil || !strings.HasPrefix(out.Result, "ok:") {
		t.Fatalf("retry: %+v %v", out, err)
	}
	if again, err := op.Retry(ctx, Actor{Who: "password", IP: "::1", Once: "r1"}, co.OrderID); err != nil || !again.Repeated {
		t.Errorf("the same form again: %+v %v", again, err)
	}
	o := f.waitStatus(t, co.OrderID, Done)
	if o.LinkToken == "" {
		t.Errorf("retried order has no link")
	}
	if refunds, _ := f.test.Refunds(ctx); len(refunds) != 0 {
		t.Errorf("a retried order was refunded: %+v", refunds)
	}
	// Past the wait, the checks below say which event is missing.
	var joined string
	testkit.WaitFor(5*time.Second, func() bool {
		tl, _ = op.Timeline(ctx, co.OrderID)
		var whats []string
		for _, e := range tl.Events {
			whats = append(whats, e.What)
		}
		joined = strings.Join(whats, "|")
		return strings.Contains(joined, "fulfil attempt 1 finished") // the retry's new job
	})
	for _, want := range []string{"created", "paid", "fulfil attempt 1 failed: ", "refund attempt 1 failed: ", "fulfil attempt 1 finished", "e-mailed", "delivered", "link expires"} {
		if !strings.Contains(joined, want) {
			t.Errorf("timeline lacks %q: %s", want, joined)
		}
	}
}

func TestOperatorExtendsALinkWithinBounds(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	op := f.book.Operator()
	o := f.delivered(t, "Keep it longer.")
	by := Actor{Who: "password", Once: "e1"}
	if _, err := op.Extend(ctx, by, o.ID, 0); !isRefused(err) {
		t.Errorf("0 days: %v", err)
	}
	by.Once = "e2"
	if _, err := op.Extend(ctx, by, o.ID, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Extend(ctx, by, o.ID, 5); err != nil { // the same form: once
		t.Fatal(err)
	}
	got, _ := op.Get(ctx, o.ID)
	if d := got.LinkExpiresAt.Sub(o.LinkExpiresAt); d != 5*24*time.Hour {
		t.Errorf("extended by %v, want 5 days once", d)
	}
	if _, err := op.Extend(ctx, Actor{Who: "password"}, "no-such-order", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown order: %v", err)
	}
	all, _ := op.Audit(ctx, "", 10)
	if len(all) != 3 {
		t.Errorf("%d audit entries, want 3", len(all))
	}
}
