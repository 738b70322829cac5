package stripe

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/testkit"
)

// sentRequest is one request the provider sent, as the wire saw it.
type sentRequest struct {
	Method, Path   string
	Form           url.Values
	IdempotencyKey string
	StripeVersion  string
	Status         int // what the server answered
}

// recorder is an http.RoundTripper that keeps every request and the status it got.
type recorder struct {
	mu   sync.Mutex
	sent []sentRequest
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	s := sentRequest{
		Method:         req.Method,
		Path:           req.URL.Path,
		IdempotencyKey: req.Header.Get("Idempotency-Key"),
		StripeVersion:  req.Header.Get("Stripe-Version"),
	}
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
		if s.Form, err = url.ParseQuery(string(body)); err != nil {
			return nil, err
		}
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		s.Status = res.StatusCode
	}
	r.mu.Lock()
	r.sent = append(r.sent, s)
	r.mu.Unlock()
	return res, err
}

func (r *recorder) requests() []sentRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sentRequest(nil), r.sent...)
}

// newMocked returns a provider talking to a fresh stripe-mock (through backend when it is
// set, to inject errors stripe-mock cannot produce) and the recorder of what it sent.
func newMocked(t *testing.T, backendURL string) (*Stripe, *recorder) {
	t.Helper()
	if backendURL == "" {
		backendURL = testkit.StartStripeMock(t)
	}
	rec := &recorder{}
	s := New(Config{
		SecretKey:     "sk_test_123",
		WebhookSecret: "whsec_test",
		BackendURL:    backendURL,
		HTTPClient:    &http.Client{Transport: rec, Timeout: 10 * time.Second},
	})
	return s, rec
}

// faultyStripe fronts stripe-mock and answers the cases stripe-mock, being stateless,
// never produces with Stripe's real error bodies.
func faultyStripe(t *testing.T) string {
	t.Helper()
	target, err := url.Parse(testkit.StartStripeMock(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	stripeError := func(w http.ResponseWriter, status int, code, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"error":{"code":"`+code+`","message":"`+msg+`","type":"invalid_request_error"}}`)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		switch {
		case r.URL.Path == "/v1/checkout/sessions/cs_test_missing":
			stripeError(w, http.StatusNotFound, "resource_missing", "No such checkout.session: 'cs_test_missing'")
		case r.URL.Path == "/v1/refunds" && form.Get("payment_intent") == "pi_already":
			stripeError(w, http.StatusBadRequest, "charge_already_refunded", "Charge ch_1 has already been refunded.")
		case r.URL.Path == "/v1/refunds" && form.Get("payment_intent") == "pi_missing":
			stripeError(w, http.StatusBadRequest, "resource_missing", "No such payment_intent: 'pi_missing'")
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func baseRequest() providers.CheckoutRequest {
	return providers.CheckoutRequest{
		OrderID:     "ord_123",
		Email:       "a@example.com",
		Locale:      "en",
		Name:        "Text to speech",
		Description: "1 234 characters, voice alloy, mp3",
		Amount:      198,
		Currency:    "eur",
		SuccessURL:  "https://parla.example/payment/success?session_id={CHECKOUT_SESSION_ID}",
		CancelURL:   "https://parla.example/tts",
		ExpiresAt:   time.Now().Add(2 * time.Hour).Truncate(time.Second),
	}
}

func TestCreateCheckout(t *testing.T) {
	s, rec := newMocked(t, "")
	ctx := context.Background()

	cases := []struct {
		name   string
		change func(*providers.CheckoutRequest)
		want   map[string]string // form fields beyond the common ones; "" means absent
	}{
		{"english with image", func(r *providers.CheckoutRequest) {
			r.ImageURL = "https://parla.example/img/tts.png"
		}, map[string]string{
			"locale": "en", "line_items[0][price_data][product_data][images][0]": "https://parla.example/img/tts.png",
		}},
		{"no image sends no images", nil, map[string]string{
			"line_items[0][price_data][product_data][images][0]": "",
		}},
		{"japanese", func(r *providers.CheckoutRequest) { r.Locale = "jp" }, map[string]string{"locale": "ja"}},
		{"spanish", func(r *providers.CheckoutRequest) { r.Locale = "es" }, map[string]string{"locale": "es"}},
		{"russian", func(r *providers.CheckoutRequest) { r.Locale = "ru" }, map[string]string{"locale": "ru"}},
		{"chinese", func(r *providers.CheckoutRequest) { r.Locale = "zh" }, map[string]string{"locale": "zh"}},
		{"arabic follows the browser", func(r *providers.CheckoutRequest) { r.Locale = "ar" }, map[string]string{"locale": "auto"}},
		{"unknown language follows the browser", func(r *providers.CheckoutRequest) { r.Locale = "xx" }, map[string]string{"locale": "auto"}},
		{"no e-mail sends none", func(r *providers.CheckoutRequest) { r.Email = "" }, map[string]string{"customer_email": ""}},
		{"no description sends none", func(r *providers.CheckoutRequest) { r.Description = "" }, map[string]string{
			"line_items[0][price_data][product_data][description]": "",
		}},
		{"upper-case currency is lowered", func(r *providers.CheckoutRequest) { r.Currency = "EUR" }, nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := baseRequest()
			req.OrderID = "ord_" + strconv.Itoa(i)
			if tc.change != nil {
				tc.change(&req)
			}
			before := len(rec.requests())
			got, err := s.CreateCheckout(ctx, req)
			if err != nil {
				t.Fatalf("CreateCheckout: %v", err)
			}
			if !strings.HasPrefix(got.ID, "cs_") || got.URL == "" {
				t.Errorf("session = %+v, want a cs_ id and a URL from stripe-mock", got)
			}
			sent := rec.requests()[before:]
			if len(sent) != 1 {
				t.Fatalf("sent %d requests, want 1: %+v", len(sent), sent)
			}
			r := sent[0]
			if r.Method != http.MethodPost || r.Path != "/v1/checkout/sessions" || r.Status != http.StatusOK {
				t.Fatalf("sent %s %s, answered %d; want POST /v1/checkout/sessions accepted with 200", r.Method, r.Path, r.Status)
			}
			if r.IdempotencyKey != "checkout-"+req.OrderID {
				t.Errorf("Idempotency-Key = %q, want %q", r.IdempotencyKey, "checkout-"+req.OrderID)
			}
			if r.StripeVersion != "2023-10-16" {
				t.Errorf("Stripe-Version = %q, want 2023-10-16", r.StripeVersion)
			}
			want := map[string]string{
				"mode":                                                 "payment",
				"line_items[0][quantity]":                              "1",
				"line_items[0][price_data][currency]":                  "eur",
				"line_items[0][price_data][unit_amount]":               "198",
				"line_items[0][price_data][product_data][name]":        "Text to speech",
				"line_items[0][price_data][product_data][description]": req.Description,
				"metadata[order_id]":                                   req.OrderID,
				"client_reference_id":                                  req.OrderID,
				"payment_intent_data[metadata][order_id]":              req.OrderID,
				"customer_email":                                       req.Email,
				"success_url":                                          req.SuccessURL,
				"cancel_url":                                           req.CancelURL,
				"expires_at":                                           strconv.FormatInt(req.ExpiresAt.Unix(), 10),
				"locale":                                               "en",
			}
			for k, v := range tc.want {
				want[k] = v
			}
			for k, v := range want {
				if v == "" {
					if _, ok := r.Form[k]; ok {
						t.Errorf("%s = %q, want it absent", k, r.Form.Get(k))
					}
					continue
				}
				if got := r.Form.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			// Nothing else that could change the price or the item may be sent.
			for k := range r.Form {
				if strings.HasPrefix(k, "line_items[1]") || strings.Contains(k, "discounts") || strings.Contains(k, "adjustable_quantity") {
					t.Errorf("unexpected field %s = %q", k, r.Form.Get(k))
				}
			}
		})
	}
}

func TestCreateCheckoutRefusesBadRequests(t *testing.T) {
	s, rec := newMocked(t, "")
	cases := []struct {
		name   string
		change func(*providers.CheckoutRequest)
	}{
		{"no order id", func(r *providers.CheckoutRequest) { r.OrderID = "" }},
		{"zero amount", func(r *providers.CheckoutRequest) { r.Amount = 0 }},
		{"negative amount", func(r *providers.CheckoutRequest) { r.Amount = -99 }},
		{"no currency", func(r *providers.CheckoutRequest) { r.Currency = "" }},
		{"no name", func(r *providers.CheckoutRequest) { r.Name = " " }},
		{"no success URL", func(r *providers.CheckoutRequest) { r.SuccessURL = "" }},
		{"no cancel URL", func(r *providers.CheckoutRequest) { r.CancelURL = "" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := baseRequest()
			tc.change(&req)
			if _, err := s.CreateCheckout(context.Background(), req); err == nil {
				t.Fatal("CreateCheckout accepted the request")
			}
		})
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("%d requests reached Stripe, want none", n)
	}
}

func TestCreateCheckoutClampsExpiry(t *testing.T) {
	s, rec := newMocked(t, "")
	cases := []struct {
		name         string
		in           time.Duration // from now; 0 means the zero time
		minIn, maxIn time.Duration // accepted range of the sent value, from now
	}{
		{"too soon moves to 31 minutes", 5 * time.Minute, 30 * time.Minute, 32 * time.Minute},
		{"in the past moves to 31 minutes", -time.Hour, 30 * time.Minute, 32 * time.Minute},
		{"too late moves to 23h59", 48 * time.Hour, 23*time.Hour + 58*time.Minute, 24 * time.Hour},
		{"unset means as late as allowed", 0, 23*time.Hour + 58*time.Minute, 24 * time.Hour},
		{"inside the window is kept", 3 * time.Hour, 3*time.Hour - 2*time.Second, 3*time.Hour + 2*time.Second},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := baseRequest()
			req.OrderID = "ord_exp_" + strconv.Itoa(i)
			now := time.Now()
			req.ExpiresAt = time.Time{}
			if tc.in != 0 {
				req.ExpiresAt = now.Add(tc.in)
			}
			before := len(rec.requests())
			if _, err := s.CreateCheckout(context.Background(), req); err != nil {
				t.Fatalf("CreateCheckout: %v", err)
			}
			r := rec.requests()[before]
			sec, err := strconv.ParseInt(r.Form.Get("expires_at"), 10, 64)
			if err != nil {
				t.Fatalf("expires_at %q: %v", r.Form.Get("expires_at"), err)
			}
			got := time.Unix(sec, 0).Sub(now)
			if got < tc.minIn || got > tc.maxIn {
				t.Errorf("expires_at is %s from now, want %s–%s", got, tc.minIn, tc.maxIn)
			}
		})
	}
}

func TestGetCheckout(t *testing.T) {
	s, rec := newMocked(t, faultyStripe(t))
	ctx := context.Background()

	t.Run("existing session", func(t *testing.T) {
		before := len(rec.requests())
		got, err := s.GetCheckout(ctx, "cs_test_a1b2c3")
		if err != nil {
			t.Fatalf("GetCheckout: %v", err)
		}
		sent := rec.requests()[before:]
		if len(sent) != 1 || sent[0].Method != http.MethodGet || sent[0].Path != "/v1/checkout/sessions/cs_test_a1b2c3" || sent[0].Status != 200 {
			t.Fatalf("sent %+v, want one GET of the session answered 200", sent)
		}
		// stripe-mock answers a fixture; what matters is that its fields reach ours.
		if got.ID == "" || got.Status == "" || got.PaymentStatus == "" {
			t.Errorf("session = %+v, want id, status and payment status mapped", got)
		}
	})

	for _, tc := range []struct {
		name, id string
		wantSent bool
	}{
		{"stripe says resource_missing", "cs_test_missing", true},
		{"not a session id", "pi_123", false},
		{"empty id", "", false},
		{"path trickery", "../balance", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.requests())
			_, err := s.GetCheckout(ctx, tc.id)
			if !errors.Is(err, providers.ErrSessionNotFound) {
				t.Fatalf("GetCheckout(%q) = %v, want ErrSessionNotFound", tc.id, err)
			}
			if sent := len(rec.requests()) - before; (sent > 0) != tc.wantSent {
				t.Errorf("sent %d requests, want sent=%v", sent, tc.wantSent)
			}
		})
	}

	t.Run("other errors are not not-found", func(t *testing.T) {
		bad := New(Config{SecretKey: "not-a-key", BackendURL: testkit.StartStripeMock(t)})
		_, err := bad.GetCheckout(ctx, "cs_test_a1b2c3")
		if err == nil || errors.Is(err, providers.ErrSessionNotFound) {
			t.Fatalf("GetCheckout with a bad key = %v, want an error that is not ErrSessionNotFound", err)
		}
	})
}

func TestStripeRefund(t *testing.T) {
	s, rec := newMocked(t, faultyStripe(t))
	ctx := context.Background()

	cases := []struct {
		name, intent, key string
		wantErr           bool
	}{
		{"refund is sent", "pi_123", "refund-ord_1", false},
		{"already refunded counts as done", "pi_already", "refund-ord_2", false},
		{"unknown intent fails", "pi_missing", "refund-ord_3", true},
		{"no intent fails", "", "refund-ord_4", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.requests())
			err := s.Refund(ctx, tc.intent, tc.key)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Refund = %v, want error %v", err, tc.wantErr)
			}
			sent := rec.requests()[before:]
			if tc.intent == "" {
				if len(sent) != 0 {
					t.Errorf("sent %d requests for an empty intent", len(sent))
				}
				return
			}
			if len(sent) != 1 {
				t.Fatalf("sent %d requests, want 1", len(sent))
			}
			r := sent[0]
			if r.Method != http.MethodPost || r.Path != "/v1/refunds" {
				t.Errorf("sent %s %s, want POST /v1/refunds", r.Method, r.Path)
			}
			if r.Form.Get("payment_intent") != tc.intent || r.IdempotencyKey != tc.key {
				t.Errorf("sent payment_intent=%q key=%q, want %q %q", r.Form.Get("payment_intent"), r.IdempotencyKey, tc.intent, tc.key)
			}
			if _, ok := r.Form["amount"]; ok {
				t.Errorf("sent amount %q, want a full refund", r.Form.Get("amount"))
			}
			if tc.intent == "pi_123" && r.Status != http.StatusOK {
				t.Errorf("stripe-mock answered %d, want 200", r.Status)
			}
		})
	}
}

// A part refund (the API credit's unused balance) sends the amount to refund.
func TestStripeRefundPart(t *testing.T) {
	s, rec := newMocked(t, faultyStripe(t))
	before := len(rec.requests())
	if err := s.RefundPart(context.Background(), "pi_123", 488, "credit-refund-k1"); err != nil {
		t.Fatal(err)
	}
	sent := rec.requests()[before:]
	if len(sent) != 1 || sent[0].Path != "/v1/refunds" || sent[0].Form.Get("amount") != "488" ||
		sent[0].Form.Get("payment_intent") != "pi_123" || sent[0].IdempotencyKey != "credit-refund-k1" || sent[0].Status != http.StatusOK {
		t.Fatalf("sent %+v, want one refund of 488 of pi_123 that stripe-mock takes", sent)
	}
}

func TestCheckoutLocale(t *testing.T) {
	for in, want := range map[string]string{
		"en": "en", "jp": "ja", "ja": "ja", "es": "es", "ru": "ru", "zh": "zh", "ar": "auto", "": "auto", "EN": "en",
	} {
		t.Run(in, func(t *testing.T) {
			if got := checkoutLocale(in); got != want {
				t.Errorf("checkoutLocale(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestExpireCheckout(t *testing.T) {
	s, rec := newMocked(t, faultyStripe(t))
	ctx := context.Background()
	cur, err := s.GetCheckout(ctx, "cs_test_a1b2c3")
	if err != nil {
		t.Fatal(err)
	}
	before := len(rec.requests())
	if _, err := s.ExpireCheckout(ctx, "cs_test_a1b2c3"); err != nil {
		t.Fatalf("ExpireCheckout: %v", err)
	}
	sent := rec.requests()[before:]
	expired := false
	for _, r := range sent {
		if r.Method == http.MethodPost && r.Path == "/v1/checkout/sessions/cs_test_a1b2c3/expire" {
			expired = true
		}
	}
	// Only an open session is closed; one that is not open is read back as it is.
	if expired != (cur.Status == "open") {
		t.Fatalf("session %s: sent %+v", cur.Status, sent)
	}
	if _, err := s.ExpireCheckout(ctx, "pi_123"); !errors.Is(err, providers.ErrSessionNotFound) {
		t.Fatalf("ExpireCheckout(pi_123) = %v", err)
	}
}
