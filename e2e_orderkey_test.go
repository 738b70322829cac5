package main

import (
	"testing"
	"time"
)

// One order key, one payment: a second tab (or Back) that checks out the same order again
// while the first checkout is open replaces it, and the first can no longer be paid; once
// the order is paid, a further checkout is refused with order_already_paid and the way to
// the paid order's page.
func TestOrderKeyTakesOnePayment(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, nil)
	const key = "k_0123456789abcdefXYZ"
	order := func(text string) map[string]any {
		o := ttsOrder(text, "echo", "mp3", 1, "visitor@example.com", "en")
		o["order"].(map[string]any)["key"] = key
		return o
	}
	ask := func() map[string]any {
		r := h.get("/payment/tts/order?key=" + key)
		h.wantStatus(r, 200)
		return r.json(t)
	}
	if m := ask(); m["paid"] != false {
		t.Fatalf("a fresh key is paid: %v", m)
	}

	// Tab 1 opens a checkout; tab 2 opens another for the same order.
	_, url1 := h.checkout(order("First tab's text."))
	session2, url2 := h.checkout(order("Second tab's text, a little longer."))
	if url1 == url2 {
		t.Fatal("the second checkout reused the first")
	}
	// The first checkout was closed: paying it now fails, so only one can be paid.
	if r := h.do("POST", url1+"/pay", "", nil, nil); r.status == 303 {
		t.Fatalf("the replaced checkout could still be paid: %d %s", r.status, r.header.Get("Location"))
	}
	if m := ask(); m["paid"] != false {
		t.Fatalf("nothing is paid yet, but the key says %v", m)
	}
	h.wantStatus(h.do("POST", url2+"/pay", "", nil, nil), 303)

	// The page asks before it offers to pay: paid, with the way to the order's page.
	m := ask()
	o, _ := m["order"].(map[string]any)
	if m["paid"] != true || o["sessionId"] != session2 || o["url"] != "/payment/success?session_id="+session2 {
		t.Fatalf("after payment the key says %v", m)
	}

	// A third tab, or Back to the form, tries to pay again: refused.
	r := h.postJSON("/payment/tts/create-checkout-session", order("Second tab's text, a little longer."))
	h.wantStatus(r, 409)
	body := r.json(t)
	e, _ := body["error"].(map[string]any)
	o, _ = body["order"].(map[string]any)
	if e["code"] != "order_already_paid" || o["sessionId"] != session2 || o["url"] != "/payment/success?session_id="+session2 {
		t.Fatalf("second payment answer: %s", r.body)
	}
	h.waitForLink(session2, 20*time.Second)
	h.wantStatus(h.postJSON("/payment/tts/create-checkout-session", order("Again.")), 409)

	// A new key is a new order.
	other := order("A new order.")
	other["order"].(map[string]any)["key"] = "k_another_key_0123456789"
	h.checkout(other)
	// A malformed key is refused before anything is stored.
	bad := order("Bad key.")
	bad["order"].(map[string]any)["key"] = "short"
	h.wantStatus(h.postJSON("/payment/tts/create-checkout-session", bad), 400)
	h.wantStatus(h.get("/payment/tts/order?key=has%20space%20in%20it%2C%20long%20enough"), 400)
}
