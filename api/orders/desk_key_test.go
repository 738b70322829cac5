package orders

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func keyedOrder(f *fixture, key, text string) (Checkout, error) {
	return f.book.Desk.CreateTTS(context.Background(), TTSRequest{
		Params: TTSParams{Voice: "nova", Format: "mp3", Speed: 1, Text: text},
		Email:  "visitor@example.com", EmailVerify: "visitor@example.com", Locale: "es", Key: key,
	})
}

func wantAlreadyPaid(t *testing.T, err error, sessionID string) {
	t.Helper()
	var ap *AlreadyPaidError
	if !errors.As(err, &ap) || !errors.Is(err, ErrAlreadyPaid) {
		t.Fatalf("err = %v, want AlreadyPaidError", err)
	}
	want := testRoutes.Success[ap.Order.Service] + "?session_id=" + sessionID
	if ap.Order.SessionID != sessionID || testRoutes.SuccessPath(ap.Order) != want {
		t.Fatalf("refusal names session %q (%s), want %q", ap.Order.SessionID, testRoutes.SuccessPath(ap.Order), sessionID)
	}
}

// A checkout completed at the provider whose payment notice has not arrived yet is being
// paid: a second checkout of the key is refused, and the first session stays paid.
func TestCompletedCheckoutRefusesASecondBeforeTheWebhook(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	const key = "key-0123456789abcdef"
	first, err := keyedOrder(f, key, "Hola, esto es una prueba.")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.test.Pay(ctx, first.SessionID); err != nil { // no event delivered
		t.Fatal(err)
	}
	_, err = keyedOrder(f, key, "Hola, esto es una prueba.")
	wantAlreadyPaid(t, err, first.SessionID)
	if o, err := f.book.Desk.PaidByKey(ctx, TTS, key); err != nil || o.ID != first.OrderID {
		t.Fatalf("PaidByKey = %v, %v; want order %s", o.ID, err, first.OrderID)
	}
	// The notice arrives; the order is produced; the key stays used up, even once done.
	f.pay(t, first.SessionID)
	f.waitStatus(t, first.OrderID, Done)
	_, err = keyedOrder(f, key, "Otra cosa.")
	wantAlreadyPaid(t, err, first.SessionID)
}

// An open checkout of the key is closed at the provider before the new one opens, so the
// visitor who came back from Cancel (or a second tab) can pay the new one and never both.
func TestOpenCheckoutIsReplacedAndCanNoLongerBePaid(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	const key = "key-abcdefghijklmnop"
	first, err := keyedOrder(f, key, "Primera versión.")
	if err != nil {
		t.Fatal(err)
	}
	second, err := keyedOrder(f, key, "Segunda versión, editada tras cancelar.")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.test.Pay(ctx, first.SessionID); err == nil {
		t.Fatal("the replaced checkout could still be paid")
	}
	if o, _ := f.book.orders.Get(ctx, first.OrderID); o.Status != Expired || o.Key != key {
		t.Fatalf("replaced order is %s with key %q", o.Status, o.Key)
	}
	if _, err := f.book.Desk.PaidByKey(ctx, TTS, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PaidByKey before payment: %v", err)
	}
	f.pay(t, second.SessionID)
	_, err = keyedOrder(f, key, "Tercera.")
	wantAlreadyPaid(t, err, second.SessionID)
	// A key is per service and the key-less API keeps working as before.
	if _, err := keyedOrder(f, "", "Sin clave."); err != nil {
		t.Fatal(err)
	}
}

// Two tabs clicking Pay at the same moment leave one open checkout, never two.
func TestConcurrentCheckoutsOfOneKeyLeaveOneOpen(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	const key = "key-concurrent-0000001"
	var wg sync.WaitGroup
	cos := make([]Checkout, 4)
	for i := range cos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			co, err := keyedOrder(f, key, "Texto.")
			if err != nil {
				t.Error(err)
			}
			cos[i] = co
		}()
	}
	wg.Wait()
	open := 0
	for _, co := range cos {
		s, err := f.test.GetCheckout(ctx, co.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status == "open" {
			open++
		}
	}
	if open != 1 {
		t.Fatalf("%d checkouts of one key are open, want 1", open)
	}
}

func TestOrderKeyShape(t *testing.T) {
	f := newFixture(t, nil)
	for _, k := range []string{"short", "has spaces in it, sadly", string(make([]byte, 65))} {
		_, err := keyedOrder(f, k, "Texto.")
		var ie *InputError
		if !errors.As(err, &ie) || ie.Code != "bad_request" {
			t.Errorf("key %q: err = %v, want bad_request", k, err)
		}
	}
}

// An audio order cancelled at the checkout is ordered again with the same upload and key:
// the upload is reused and the first checkout closed; once paid, the key refuses another
// checkout with order_already_paid (not "upload not found").
func TestAudioOrderKeyReusesTheUploadAndRefusesASecondPayment(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	u, _, err := f.upload(t, "12s")
	if err != nil {
		t.Fatal(err)
	}
	req := f.transcriptOrder(u.ID, "")
	req.Key = "audio-key-0123456789"
	first, err := f.book.Desk.CreateSTT(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.book.Desk.CreateSTT(ctx, req) // back from Cancel
	if err != nil {
		t.Fatalf("the same upload after Cancel: %v", err)
	}
	if s, _ := f.test.GetCheckout(ctx, first.SessionID); s.Status != "expired" {
		t.Fatalf("first checkout is %s, want expired", s.Status)
	}
	f.pay(t, again.SessionID)
	_, err = f.book.Desk.CreateSTT(ctx, req)
	wantAlreadyPaid(t, err, again.SessionID)
}
