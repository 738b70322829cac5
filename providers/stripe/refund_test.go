package stripe

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/testkit"
)

// stripeAnswer is an answer Stripe gives to a refund, as its API sends it.
type stripeAnswer struct {
	status int
	body   string // the error object's JSON
	hangUp bool   // no answer at all: the connection is closed
	stall  bool   // no answer within the caller's deadline
}

// Stripe's error bodies, as its API documents and sends them.
var refundAnswers = map[string]stripeAnswer{
	"pi_already": {status: 400, body: `{"error":{"code":"charge_already_refunded","message":"Charge ch_1 has already been refunded.","type":"invalid_request_error"}}`},
	"pi_missing": {status: 400, body: `{"error":{"code":"resource_missing","message":"No such payment_intent: 'pi_missing'","param":"payment_intent","type":"invalid_request_error"}}`},
	"pi_badkey":  {status: 401, body: `{"error":{"message":"Invalid API Key provided: sk_test_****","type":"invalid_request_error"}}`},
	"pi_nofunds": {status: 402, body: `{"error":{"code":"insufficient_funds","message":"Insufficient funds in Stripe account.","type":"invalid_request_error"}}`},
	"pi_in_use":  {status: 409, body: `{"error":{"code":"idempotency_key_in_use","message":"There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): refund-ord_1. Please try again later.","type":"invalid_request_error"}}`},
	"pi_reused":  {status: 400, body: `{"error":{"message":"Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than 'refund-ord_1' if you meant to execute a different request.","type":"idempotency_error"}}`},
	"pi_limited": {status: 429, body: `{"error":{"code":"rate_limit","message":"Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.","type":"invalid_request_error"}}`},
	"pi_locked":  {status: 429, body: `{"error":{"code":"lock_timeout","message":"This object cannot be accessed right now because another API request or Stripe process is currently accessing it.","type":"invalid_request_error"}}`},
	"pi_broken":  {status: 500, body: `{"error":{"message":"An unknown error occurred","type":"api_error"}}`},
	"pi_down":    {status: 503, body: `{"error":{"message":"Service unavailable","type":"api_error"}}`},
	"pi_hangup":  {hangUp: true},
	"pi_stall":   {stall: true},
}

// answeringStripe answers refunds of the intents in refundAnswers as Stripe would, and
// passes everything else to stripe-mock.
func answeringStripe(t *testing.T) string {
	t.Helper()
	target, err := url.Parse(testkit.StartStripeMock(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Errorf("reading the request: %v", err)
		}
		a, ok := refundAnswers[r.PostForm.Get("payment_intent")]
		switch {
		case !ok || r.URL.Path != "/v1/refunds":
			proxy.ServeHTTP(w, r)
		case a.hangUp:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case a.stall:
			<-r.Context().Done()
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			io.WriteString(w, a.body)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A refund's answer is done, certainly refused, or unknown: only a 4xx refusing the
// request itself wraps providers.ErrNotRefunded. A 409 (the refund job and the operator's
// Refund racing on one key), a reused key, a 429, a 5xx, a hang-up or a timeout may have
// refunded: read as refused, the order's mark was cleared while the money went back, and
// a Retry then delivered a refunded order.
func TestStripeRefundAnswers(t *testing.T) {
	s, _ := newMocked(t, answeringStripe(t))
	for _, tc := range []struct {
		intent string
		want   refundFate
	}{
		{"pi_123", refundDone}, // stripe-mock refunds it
		{"pi_already", refundDone},
		{"pi_missing", refundRefused},
		{"pi_badkey", refundRefused},
		{"pi_nofunds", refundRefused},
		{"pi_in_use", refundUnknown},
		{"pi_reused", refundUnknown},
		{"pi_limited", refundUnknown},
		{"pi_locked", refundUnknown},
		{"pi_broken", refundUnknown},
		{"pi_down", refundUnknown},
		{"pi_hangup", refundUnknown},
		{"pi_stall", refundUnknown},
	} {
		t.Run(tc.intent, func(t *testing.T) {
			t.Parallel()
			// stripe-go retries a 409, a lock_timeout and a lost connection twice, with
			// backoff (under 10 s in all): the deadline is for the stalled answer only.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if tc.intent == "pi_stall" {
				ctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
				defer cancel()
			}
			err := s.Refund(ctx, tc.intent, "refund-ord_1")
			var got refundFate
			switch {
			case err == nil:
				got = refundDone
			case errors.Is(err, providers.ErrNotRefunded):
				got = refundRefused
			default:
				got = refundUnknown
			}
			if got != tc.want {
				t.Errorf("Refund = %v: read as %s, want %s", err, got, tc.want)
			}
			if err != nil && !errors.Is(err, providers.ErrPaymentProvider) {
				t.Errorf("Refund = %v, want it to wrap ErrPaymentProvider", err)
			}
		})
	}
}

func (f refundFate) String() string {
	return [...]string{"unknown", "done", "refused"}[f]
}
