package orders

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tenBytes is an upload of ten bytes that lengthInFile reads as 10 s of speech.
const tenBytes = "10s       "

// Kept unpaid uploads are bounded per client address and in all: past either quota an
// upload is refused with its own code and its file removed, even when ten arrive at once;
// an upload an order has paid for no longer counts.
func TestUploadQuotas(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.UploadQuotaPerClient, c.UploadQuotaTotal = 30, 50 })
	ctx := context.Background()
	const alice, bob, carol = "198.51.100.7", "2001:db8:1:2::/64", "203.0.113.9"

	// Ten at once from one address: three fit in its 30 bytes.
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	var kept []Upload
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, _, err := f.uploadFrom(t, alice, tenBytes)
			mu.Lock()
			defer mu.Unlock()
			codes[code(err)]++
			if err == nil {
				kept = append(kept, u)
			}
		}()
	}
	wg.Wait()
	if codes[""] != 3 || codes["upload_quota"] != 7 {
		t.Fatalf("ten uploads at once from one address: %v, want 3 accepted and 7 upload_quota", codes)
	}
	if got := files(t, f.uploads); len(got) != 3 || len(files(t, f.tmp)) != 0 {
		t.Fatalf("kept %v, scratch %v: a refused upload's file must go", got, files(t, f.tmp))
	}
	// Another address has its own quota, within the total's 50 bytes.
	for i := range 3 {
		_, _, err := f.uploadFrom(t, bob, tenBytes)
		if want := map[bool]string{true: "", false: "uploads_full"}[i < 2]; code(err) != want {
			t.Errorf("upload %d from another address: %q, want %q", i+1, code(err), want)
		}
	}
	if n, err := f.book.UnpaidUploadBytes(ctx); n != 50 || err != nil {
		t.Errorf("UnpaidUploadBytes = %d, %v; want 50", n, err)
	}
	if err := f.book.Intake.UploadAllowed(ctx, alice); code(err) != "upload_quota" {
		t.Errorf("UploadAllowed for a client at its quota: %v", err)
	}
	if err := f.book.Intake.UploadAllowed(ctx, carol); code(err) != "uploads_full" {
		t.Errorf("UploadAllowed with the total reached: %v", err)
	}
	if _, _, err := f.uploadFrom(t, carol, tenBytes); code(err) != "uploads_full" {
		t.Errorf("a third address with the total reached: %v", err)
	}

	// Taken to checkout and paid, an upload is no longer unpaid: room for one more.
	co, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(kept[0].ID, ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.uploadFrom(t, alice, tenBytes); code(err) != "upload_quota" {
		t.Errorf("an upload awaiting payment still counts: %v", err)
	}
	f.pay(t, co.SessionID)
	f.waitStatus(t, co.OrderID, Done)
	if err := f.book.Intake.UploadAllowed(ctx, alice); err != nil {
		t.Errorf("UploadAllowed once one upload is paid for: %v", err)
	}
	if _, _, err := f.uploadFrom(t, alice, tenBytes); err != nil {
		t.Errorf("upload after paying for one: %v", err)
	}
	// Swept after UPLOAD_TTL, the others leave room too.
	f.clock.Advance(25 * time.Hour)
	if _, err := f.book.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.uploadFrom(t, carol, tenBytes); err != nil {
		t.Errorf("upload after the sweep: %v", err)
	}
}

// With no quotas set (0), uploads are not counted.
func TestUploadsWithoutQuota(t *testing.T) {
	f := newFixture(t, nil)
	for range 5 {
		if _, _, err := f.uploadFrom(t, "198.51.100.7", strings.Repeat(" ", 1000)+"10s"); err != nil {
			t.Fatal(err)
		}
	}
}

// An unpaid order's text and address are erased once its checkout has lapsed, not kept a
// day: 100,000 characters of unpaid text cost nothing to send, so each is kept for two
// hours at most (CheckoutTTL's 30 min, and time for a payment's late notification).
func TestUnpaidOrdersAreErasedSoonAfterTheirCheckout(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	co := f.order(t, "Nobody pays for this text.")
	f.clock.Advance(2*time.Hour - time.Minute)
	f.book.Sweep(ctx)
	if o, err := f.book.orders.Get(ctx, co.OrderID); err != nil || o.Status != AwaitingPayment || o.Email == "" {
		t.Fatalf("before two hours: %+v, %v", o, err)
	}
	f.clock.Advance(2 * time.Minute)
	rep, err := f.book.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.book.orders.Get(ctx, co.OrderID)
	if err != nil || rep.Unpaid != 1 || o.Status != Expired || o.Email != "" || strings.Contains(string(o.Params), "Nobody") {
		t.Errorf("two hours after: swept %+v, order %+v, %v", rep, o, err)
	}
}

// When the disk is short, the sweep frees the unpaid uploads no open checkout holds,
// however young, before the node is taken out of the balance; one whose visitor may be
// paying now stays.
func TestSweepFreesIdleUploadsWhenTheDiskIsShort(t *testing.T) {
	var low atomic.Bool
	f := newFixture(t, func(c *Config) { c.LowDisk = low.Load })
	ctx := context.Background()
	idle, _, _ := f.upload(t, "3s")
	waiting, _, _ := f.upload(t, "4s")
	lapsed, _, _ := f.upload(t, "5s")
	if _, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(waiting.ID, "")); err != nil {
		t.Fatal(err)
	}
	co, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(lapsed.ID, ""))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.book.orders.Expire(ctx, co.OrderID); !ok || err != nil {
		t.Fatalf("expiring: %v %v", ok, err)
	}
	if rep, err := f.book.Sweep(ctx); err != nil || rep.Uploads != 0 {
		t.Fatalf("with room on the disk: %+v %v", rep, err)
	}
	low.Store(true)
	rep, err := f.book.Sweep(ctx)
	if err != nil || rep.Uploads != 2 {
		t.Errorf("with the disk short: %+v %v, want 2 uploads freed", rep, err)
	}
	if got := files(t, f.uploads); len(got) != 1 || got[0] != waiting.ID {
		t.Errorf("left %v, want only the upload awaiting payment (%s; idle %s)", got, waiting.ID, idle.ID)
	}
}
