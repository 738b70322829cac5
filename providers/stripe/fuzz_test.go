package stripe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/testkit"
)

// How FuzzParseWebhook signs the fuzzed payload.
const (
	headerAsGiven     = iota // the fuzzed header, verbatim
	signedNow                // a valid signature, made now
	signedOtherKey           // signed with another secret
	signedTooLate            // a valid signature older than WebhookTolerance
	signedThenAltered        // signed, then a byte appended to the payload
	signedPlusGiven          // a valid signature followed by the fuzzed header's elements
	signModes
)

// FuzzParseWebhook: a delivery is accepted only with a v1 signature over exactly its bytes,
// made with our secret within the tolerance; every refusal is ErrBadSignature or
// ErrBadPayload (never both, never a secret in the message); an accepted event has an id and
// a type that plain JSON reads the same, and a session exactly when it is a checkout event.
func FuzzParseWebhook(f *testing.F) {
	f.Add([]byte(completedEvent), "", uint8(signedNow))
	f.Add([]byte(completedEvent), "t=1700000000,v1=00", uint8(headerAsGiven))
	f.Add([]byte(`{"id":"evt_2","type":"checkout.session.expired","data":{"object":{"id":"cs_1","object":"checkout.session","payment_intent":{"id":"pi_1"}}}}`), "", uint8(signedNow))
	s := New(Config{SecretKey: "sk_test_123", WebhookSecret: testWebhookSecret})
	unset := New(Config{SecretKey: "sk_test_123"})
	f.Fuzz(func(t *testing.T, payload []byte, header string, mode uint8) {
		now := time.Now()
		body := payload
		switch mode % signModes {
		case signedNow:
			header = testkit.SignPayload(payload, testWebhookSecret, now)
		case signedOtherKey:
			header = testkit.SignPayload(payload, "whsec_other", now)
		case signedTooLate:
			header = testkit.SignPayload(payload, testWebhookSecret, now.Add(-WebhookTolerance-time.Minute))
		case signedThenAltered:
			header = testkit.SignPayload(payload, testWebhookSecret, now)
			body = append(append([]byte(nil), payload...), ' ')
		case signedPlusGiven:
			// Only the fuzzed header's well-formed elements other than t: more signatures,
			// other schemes, unknown keys, which must not spoil a valid signature.
			extra := []string{testkit.SignPayload(payload, testWebhookSecret, now)}
			for _, item := range strings.Split(header, ",") {
				if k, _, _ := strings.Cut(item, "="); strings.Count(item, "=") == 1 && k != "t" {
					extra = append(extra, item)
				}
			}
			header = strings.Join(extra, ",")
		}

		if _, err := unset.ParseWebhook(body, header); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("without a secret: %v, want ErrBadSignature", err)
		}
		ev, err := s.ParseWebhook(body, header)
		if err != nil {
			sig, bad := errors.Is(err, ErrBadSignature), errors.Is(err, ErrBadPayload)
			if sig == bad {
				t.Fatalf("error %v: want exactly one of ErrBadSignature, ErrBadPayload", err)
			}
			if strings.Contains(err.Error(), testWebhookSecret) {
				t.Fatalf("error repeats the secret: %v", err)
			}
		}
		switch mode % signModes {
		case signedOtherKey, signedTooLate, signedThenAltered:
			if !errors.Is(err, ErrBadSignature) {
				t.Fatalf("mode %d: ParseWebhook = %+v, %v; want ErrBadSignature", mode%signModes, ev, err)
			}
		case signedNow, signedPlusGiven:
			if errors.Is(err, ErrBadSignature) {
				t.Fatalf("a valid signature refused: %v (header %q)", err, header)
			}
		}
		if err != nil {
			if ev != (providers.WebhookEvent{}) {
				t.Fatalf("an error with an event: %+v", ev)
			}
			return
		}
		if !signedBy(body, header, testWebhookSecret, now) {
			t.Fatalf("accepted %q without a fresh v1 signature of its bytes (header %q)", body, header)
		}
		checkEvent(t, body, ev)
	})
}

// signedBy reports whether header carries a v1 HMAC-SHA256 of "t.payload" under secret,
// with a timestamp within WebhookTolerance of now: Stripe's scheme, checked independently.
func signedBy(payload []byte, header, secret string, now time.Time) bool {
	var ts string
	var sigs []string
	for _, item := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(unix, 0)) > WebhookTolerance {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	// Stripe signs the timestamp as a plain decimal number, whatever its form in the header.
	mac.Write([]byte(strconv.FormatInt(unix, 10) + "."))
	mac.Write(payload)
	want := mac.Sum(nil)
	for _, s := range sigs {
		if got, err := hex.DecodeString(s); err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// checkEvent holds what an accepted event must be, compared with plain JSON's reading of
// the body.
func checkEvent(t *testing.T, body []byte, ev providers.WebhookEvent) {
	t.Helper()
	if ev.ID == "" || ev.Type == "" {
		t.Fatalf("accepted an event without id or type: %+v", ev)
	}
	var plain struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Created int64  `json:"created"`
		Data    struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &plain); err == nil {
		if plain.ID != ev.ID || plain.Type != ev.Type || !ev.Created.Equal(time.Unix(plain.Created, 0)) {
			t.Fatalf("event %q %q %v; the JSON says %q %q %d", ev.ID, ev.Type, ev.Created, plain.ID, plain.Type, plain.Created)
		}
	}
	if !isCheckout(ev.Type) {
		if ev.Session != (providers.CheckoutSession{}) {
			t.Fatalf("%s event carries a session: %+v", ev.Type, ev.Session)
		}
		return
	}
	if ev.Session.ID == "" {
		t.Fatalf("checkout event %s without a session id", ev.ID)
	}
	var obj struct {
		Object string `json:"object"`
		ID     string `json:"id"`
	}
	if err := json.Unmarshal(plain.Data.Object, &obj); err == nil && (obj.Object != "checkout.session" || obj.ID != ev.Session.ID) {
		t.Fatalf("session %q accepted from a %q object %q", ev.Session.ID, obj.Object, obj.ID)
	}
}
