package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
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
	// In the browser, the first tab's Pay leads back to its page, which says why and links
	// back to the form, in the visitor's language (not the JSON error above).
	r := h.do("POST", url1+"/pay", "application/x-www-form-urlencoded", nil, browser)
	if loc := r.header.Get("Location"); r.status != 303 || !strings.HasSuffix(url1, loc) {
		t.Fatalf("a browser's Pay of the replaced checkout: %d to %q", r.status, loc)
	}
	page := h.do("GET", url1, "", nil, browser)
	h.wantStatus(page, 200)
	for _, want := range []string{"replaced by a newer one", ">Back</a>"} {
		if !strings.Contains(string(page.body), want) {
			t.Errorf("the replaced checkout's page lacks %q:\n%s", want, page.body)
		}
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
	r = h.postJSON("/payment/tts/create-checkout-session", order("Second tab's text, a little longer."))
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

func TestStripeWebhooks(t *testing.T) {
	requireMediaTools(t)
	mock := testkit.StartStripeMock(t)
	const secret = "whsec_parla_test_secret"
	h := startApp(t, map[string]string{"STRIPE_SECRET_KEY": "sk_test_parla", "STRIPE_WEBHOOK_SECRET": secret,
		"STRIPE_PUBLISHABLE_KEY": "pk_test_parla", "STRIPE_API_BASE": mock})
	cfg := h.get("/api/config").json(t)
	if p := cfg["payment"].(map[string]any); p["mode"] != "stripe" || p["publishableKey"] != "pk_test_parla" {
		t.Fatalf("payment config: %v", p)
	}
	sessionID, url := h.checkout(ttsOrder("Paid through Stripe.", "onyx", "mp3", 1, "s@example.com", "es"))
	if !strings.HasPrefix(sessionID, "cs_") || !strings.HasPrefix(url, "https://") {
		t.Fatalf("stripe session %q url %q", sessionID, url)
	}
	h.wantStatus(h.get("/checkout/test/"+sessionID), 404) // no test checkout with real payments

	event := func(id, typ, paymentStatus string) []byte {
		return []byte(fmt.Sprintf(`{"id":%q,"object":"event","type":%q,"created":%d,"api_version":"2023-10-16",
			"data":{"object":{"id":%q,"object":"checkout.session","payment_status":%q,"status":"complete",
			"payment_intent":"pi_parla_1","amount_total":99,"currency":"eur","client_reference_id":"",
			"customer_details":{"email":"s@example.com","name":"S"},"metadata":{}}}}`,
			id, typ, time.Now().Unix(), sessionID, paymentStatus))
	}
	send := func(body []byte, sig string) reply {
		hdr := map[string]string{}
		if sig != "" {
			hdr["Stripe-Signature"] = sig
		}
		return h.do("POST", "/webhooks/stripe", "application/json", body, hdr)
	}
	expired := event("evt_expired_first", "checkout.session.expired", "unpaid")
	completed := event("evt_completed", "checkout.session.completed", "paid")

	tests := []struct {
		name   string
		body   []byte
		sig    string
		status int
		code   string
	}{
		{"unsigned", completed, "", 400, "invalid_signature"},
		{"wrong secret", completed, testkit.SignPayload(completed, "whsec_other", time.Now()), 400, "invalid_signature"},
		{"tampered", bytes.Replace(completed, []byte(`"amount_total":99`), []byte(`"amount_total":1`), 1),
			testkit.SignPayload(completed, secret, time.Now()), 400, "invalid_signature"},
		{"stale", completed, testkit.SignPayload(completed, secret, time.Now().Add(-time.Hour)), 400, "invalid_signature"},
		{"signed but not an event", []byte("{not json"), testkit.SignPayload([]byte("{not json"), secret, time.Now()), 400, "invalid_payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := send(tt.body, tt.sig)
			if r.status != tt.status || r.json(t)["error"].(map[string]any)["code"] != tt.code {
				t.Errorf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	h.wantStatus(h.postJSON("/services/tts", map[string]string{"sessionId": sessionID}), 402)

	// Out of order: a paid event arrives first, then a stale "expired" must not undo it.
	r := send(completed, testkit.SignPayload(completed, secret, time.Now()))
	h.wantStatus(r, 200)
	dup := send(completed, testkit.SignPayload(completed, secret, time.Now()))
	if dup.status != 200 || dup.json(t)["duplicate"] != true {
		t.Errorf("replayed event: %d %s", dup.status, dup.body)
	}
	h.wantStatus(send(expired, testkit.SignPayload(expired, secret, time.Now())), 200)
	link := h.waitForLink(sessionID, 20*time.Second)
	if codec, _ := probe(t, h.get(link).body); codec != "mp3" {
		t.Errorf("result codec %s", codec)
	}
	var jobs int
	h.app.db.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = 'fulfil'`).Scan(&jobs)
	if jobs != 1 {
		t.Errorf("%d fulfilment jobs, want exactly 1", jobs)
	}
}

// A payment provider that cannot be reached is not the visitor's fault: 503
// payment_provider_error, and the order is not left open.
func TestPaymentProviderUnreachable(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, map[string]string{"STRIPE_SECRET_KEY": "sk_test_parla", "STRIPE_WEBHOOK_SECRET": "whsec_x",
		"STRIPE_PUBLISHABLE_KEY": "pk_test_parla", "STRIPE_API_BASE": "http://" + testkit.FreePort(t)})
	r := h.postJSON("/payment/tts/create-checkout-session", ttsOrder("Nobody answers.", "alloy", "mp3", 1, "u@example.com", "en"))
	if r.status != 503 || codeOf(r) != "payment_provider_error" {
		t.Fatalf("got %d %s, want 503 payment_provider_error", r.status, r.body)
	}
	var open int
	h.app.db.QueryRow(`SELECT COUNT(*) FROM orders WHERE status = 'awaiting_payment'`).Scan(&open)
	if open != 0 {
		t.Errorf("%d orders left awaiting a payment that cannot happen", open)
	}
}

func TestCheckoutCreationIsRateLimitedPerClient(t *testing.T) {
	h := startApp(t, map[string]string{"RATE_LIMIT": "2"})
	order := ttsOrder("Hello.", "alloy", "mp3", 1, "r@example.com", "en")
	h.checkout(order)
	h.checkout(order)
	r := h.postJSON("/payment/tts/create-checkout-session", order)
	if r.status != 429 || r.json(t)["error"].(map[string]any)["code"] != "rate_limited" {
		t.Errorf("third checkout in a minute: %d %s", r.status, r.body)
	}
	// Audio- and video-to-text checkouts are checkouts too: the same bucket. Uploads and
	// link analyses are limited each in its own bucket, as the README says: the checkouts
	// used up above took none of them, and each refuses only past its own RATE_LIMIT.
	h.wantStatus(h.postJSON("/payment/sst/create-checkout-session", map[string]any{"order": map[string]any{}}), 429)
	for name, send := range map[string]func() reply{
		"upload":   func() reply { return h.do("POST", "/services/sst/uploadaudio", "text/plain", []byte("x"), nil) },
		"analysis": func() reply { return h.postJSON("/services/vtt/analyzevideo", map[string]string{"link": "x"}) },
	} {
		for i := range 3 {
			r := send()
			if limited := r.status == 429; limited != (i == 2) {
				t.Errorf("%s %d: %d %s", name, i+1, r.status, r.body)
			}
		}
	}
	// Session lookups ask the payment provider: limited in their own bucket; the result
	// polling of a paying visitor (about once a second) is not.
	sessionID, _ := startApp(t, nil).checkout(order) // any id will do: the count is the point
	for i := range 3 {
		r := h.get("/payment/tts/checkout-session?sessionId=" + sessionID)
		if want := map[bool]int{true: 404, false: 429}[i < 2]; r.status != want {
			t.Errorf("lookup %d: %d %s, want %d", i+1, r.status, r.body, want)
		}
	}
	for range 5 {
		if r := h.postJSON("/services/tts", map[string]string{"sessionId": sessionID}); r.status == 429 {
			t.Fatalf("result polling is rate limited: %s", r.body)
		}
	}
	// Quotes, asked as the visitor types, have a bucket of their own, four times as big:
	// the checkouts above took none of it, and the ninth quote is refused.
	quote := map[string]string{"text": "Hola, ¿cómo estás? Hoy hace buen tiempo.", "locale": "en"}
	for i := range 9 {
		r := h.postJSON("/api/tts/quote", quote)
		if want := map[bool]int{true: 200, false: 429}[i < 8]; r.status != want {
			t.Errorf("quote %d: %d %s, want %d", i+1, r.status, r.body, want)
		}
	}
}

// Behind a trusted proxy the limit counts the address the proxy saw, not one the client
// wrote at the left of X-Forwarded-For; refusals are logged at debug only, and every
// answer forbids content sniffing.
func TestRateLimitBehindAProxyAndQuietRefusals(t *testing.T) {
	logged := &testkit.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := startAppLogging(t, map[string]string{"RATE_LIMIT": "2", "TRUSTED_PROXIES": "127.0.0.1"}, log)
	order, _ := json.Marshal(ttsOrder("Hello.", "alloy", "mp3", 1, "r@example.com", "en"))
	post := func(xff string) reply {
		return h.do("POST", "/payment/tts/create-checkout-session", "application/json", order,
			map[string]string{"X-Forwarded-For": xff})
	}
	for i := range 4 {
		// A client that makes up a new leftmost address each time is still one client.
		r := post(fmt.Sprintf("6.6.6.%d, 198.51.100.4", i))
		if want := map[bool]int{true: 200, false: 429}[i < 2]; r.status != want {
			t.Errorf("request %d: %d %s, want %d", i+1, r.status, r.body, want)
		}
	}
	h.wantStatus(post("198.51.100.5"), 200) // another client behind the same proxy
	for range 20 {
		h.get("/api/nothing-here")
	}
	if r := h.get("/healthz"); r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q", r.header.Get("X-Content-Type-Options"))
	}
	if out := logged.String(); strings.Contains(out, "request refused") {
		t.Errorf("refusals logged at info:\n%s", out)
	}
}
