package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"parla/providers/testkit"
)

const (
	e2eAdminPassword = "operator password for tests"
	e2eAdminToken    = "admin-token-for-tests-0123456789abcdef"
)

// adminEnv opens the admin area with a password and a token.
func adminEnv(t testing.TB, env map[string]string) map[string]string {
	hash, err := bcrypt.GenerateFromPassword([]byte(e2eAdminPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"ADMIN_PASSWORD_HASH": string(hash), "ADMIN_TOKEN": e2eAdminToken}
	for k, v := range env {
		out[k] = v
	}
	return out
}

// adminSession is a signed-in operator's cookie and CSRF token.
type adminSession struct {
	h            *harness
	cookie, csrf string
}

func (h *harness) adminSignIn() adminSession {
	h.t.Helper()
	r := h.do("POST", "/admin/sign-in", "application/x-www-form-urlencoded",
		[]byte(url.Values{"password": {e2eAdminPassword}}.Encode()), nil)
	h.wantStatus(r, 303)
	cookie := strings.SplitN(r.header.Get("Set-Cookie"), ";", 2)[0]
	page := h.do("GET", "/admin/orders", "", nil, map[string]string{"Cookie": cookie})
	h.wantStatus(page, 200)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page.body)
	if m == nil {
		h.t.Fatalf("no CSRF token on the orders page")
	}
	return adminSession{h: h, cookie: cookie, csrf: string(m[1])}
}

func (s adminSession) get(path string) reply {
	return s.h.do("GET", path, "", nil, map[string]string{"Cookie": s.cookie})
}

// act sends an action's form as the order page does, with its once key.
func (s adminSession) act(orderID, action, once string, fields url.Values) reply {
	s.h.t.Helper()
	if fields == nil {
		fields = url.Values{}
	}
	fields.Set("csrf", s.csrf)
	fields.Set("once", once)
	r := s.h.do("POST", "/admin/orders/"+orderID+"/"+action, "application/x-www-form-urlencoded",
		[]byte(fields.Encode()), map[string]string{"Cookie": s.cookie})
	s.h.wantStatus(r, 303)
	return r
}

// adminJSON asks the admin area as a script does, with the token.
func (h *harness) adminJSON(method, path string, v any) int {
	h.t.Helper()
	r := h.do(method, path, "", nil, map[string]string{"Authorization": "Bearer " + e2eAdminToken})
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			h.t.Fatalf("%s %s: %d %s", method, path, r.status, r.body)
		}
	}
	return r.status
}

// orderIDOf finds an order by its checkout session, as the operator searches.
func (h *harness) orderIDOf(sessionID string) string {
	h.t.Helper()
	var found struct {
		Orders []struct {
			ID string `json:"id"`
		} `json:"orders"`
	}
	h.adminJSON("GET", "/admin/orders?q="+url.QueryEscape(sessionID), &found)
	if len(found.Orders) != 1 {
		h.t.Fatalf("search by session %s found %d orders", sessionID, len(found.Orders))
	}
	return found.Orders[0].ID
}

func TestAdminClosedByDefault(t *testing.T) {
	h := startApp(t, nil)
	for _, p := range []string{"/admin", "/admin/orders", "/admin/jobs/"} {
		r := h.do("GET", p, "", nil, map[string]string{"Authorization": "Bearer " + e2eAdminToken})
		if r.status != 404 || !bytes.Contains(r.body, []byte("The admin area is closed")) {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
}

func TestAdminResendRefundAndJobsEndToEnd(t *testing.T) {
	requireMediaTools(t)
	smtp := testkit.StartSMTP(t)
	h := startApp(t, adminEnv(t, map[string]string{"SMTP_URL": smtp.URL()}))

	// River's UI answers only to a signed-in operator.
	if r := h.get("/admin/jobs/"); r.status != 303 || r.header.Get("Location") != "/admin/sign-in" {
		t.Errorf("River's UI without sign-in: %d %s", r.status, r.header.Get("Location"))
	}
	if r := h.do("GET", "/admin/jobs/api/jobs?state=completed", "", nil, map[string]string{"Accept": "application/json"}); r.status != 401 {
		t.Errorf("River's API without sign-in: %d", r.status)
	}
	op := h.adminSignIn()

	sessionID, checkoutURL := h.checkout(ttsOrder("An order the operator looks after.", "alloy", "mp3", 1, "buyer@example.org", "en"))
	h.wantStatus(h.do("POST", checkoutURL+"/pay", "", nil, nil), 303)
	link := h.waitForLink(sessionID, 30*time.Second)
	smtp.WaitForMessages(t, 1, 10*time.Second)
	id := h.orderIDOf(sessionID)

	list := op.get("/admin/orders?q=" + url.QueryEscape(sessionID) + "&state=delivered")
	if !bytes.Contains(list.body, []byte(`href="/admin/orders/`+id+`"`)) {
		t.Errorf("the HTML search does not list the order")
	}
	page := op.get("/admin/orders/" + id)
	for _, want := range []string{"delivered", "e-mailed", "fulfil attempt 1", "Characters", "espeak"} {
		if !bytes.Contains(page.body, []byte(want)) {
			t.Errorf("the order's page lacks %q", want)
		}
	}

	// Resend, clicked twice: exactly one more letter, to the typed address, with the link.
	op.act(id, "resend", "resend-1", url.Values{"to": {"buyer.new@example.org"}})
	op.act(id, "resend", "resend-1", url.Values{"to": {"buyer.new@example.org"}})
	got := smtp.WaitForMessages(t, 2, 10*time.Second)
	time.Sleep(300 * time.Millisecond) // under test: no third letter, had the second click sent one
	if got = smtp.Messages(); len(got) != 2 {
		t.Fatalf("%d messages, want the delivery and exactly one resent", len(got))
	}
	if got[1].To[0] != "buyer.new@example.org" || !bytes.Contains(got[1].Data, []byte(pageLink(link))) {
		t.Errorf("resent letter to %v lacks the link", got[1].To)
	}

	// Refund, clicked in two tabs: one refund at the payment provider.
	op.act(id, "refund", "refund-tab-1", nil)
	op.act(id, "refund", "refund-tab-2", nil)
	refunds, err := h.app.test.Refunds(context.Background())
	if err != nil || len(refunds) != 1 {
		t.Fatalf("refunds at the checkout: %+v %v", refunds, err)
	}
	var tl struct {
		Order struct {
			Status string `json:"status"`
		} `json:"order"`
		Audit []struct {
			Action, Result string
		} `json:"audit"`
	}
	h.adminJSON("GET", "/admin/orders/"+id, &tl)
	if tl.Order.Status != "refunded" || len(tl.Audit) != 3 {
		t.Errorf("after the refund: %+v", tl)
	}

	jobs := op.get("/admin/jobs/")
	if jobs.status != 200 || !bytes.Contains(jobs.body, []byte("<html")) {
		t.Errorf("River's UI signed in: %d %.200s", jobs.status, jobs.body)
	}
	api := op.get("/admin/jobs/api/jobs?state=completed")
	if api.status != 200 || !bytes.Contains(api.body, []byte(`"fulfil"`)) {
		t.Errorf("River's API signed in: %d %.300s", api.status, api.body)
	}
}

// An order whose production failed, and whose refund the payment provider refused, stays
// failed: the operator retries it and it is delivered.
func TestAdminRetriesAFailedOrderEndToEnd(t *testing.T) {
	requireMediaTools(t)
	openai := startFakeOpenAI(t)
	env := openai.env()
	env["FULFIL_MAX_ATTEMPTS"] = "2"
	h := startApp(t, adminEnv(t, env))
	co := sampleSTTCheckout(t, h)
	sessionID := co["sessionId"].(string)

	// The upload is unreadable when the job runs (a disk gone), and the provider refuses
	// refunds for now.
	uploads := filepath.Join(h.cfg.DataDir, "uploads")
	away := t.TempDir()
	for _, f := range dirFiles(t, uploads) {
		if err := os.Rename(f, filepath.Join(away, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.app.db.Exec(`CREATE TRIGGER refunds_refused BEFORE INSERT ON test_checkout_refunds
		BEGIN SELECT RAISE(ABORT, 'refunds are refused for now'); END`); err != nil {
		t.Fatal(err)
	}
	h.wantStatus(h.do("POST", co["url"].(string)+"/pay", "", nil, nil), 303)
	id := h.orderIDOf(sessionID)
	type timeline struct {
		Order struct {
			Status, Error string
		} `json:"order"`
		Attempts []struct {
			Job, State, Error string
		} `json:"attempts"`
	}
	var tl timeline
	// The refund job retries for hours (jobs.RefundAttempts); after four refusals its next
	// try is over a second away (FULFIL_RETRY_BASE 100ms, doubled), time for the retry.
	if !testkit.WaitFor(30*time.Second, func() bool {
		tl = timeline{}
		h.adminJSON("GET", "/admin/orders/"+id, &tl)
		refused, waiting := 0, false
		for _, a := range tl.Attempts {
			if a.Job == "refund" && a.Error != "" {
				refused++
				waiting = a.State == "retryable"
			}
		}
		return tl.Order.Status == "failed" && refused >= 4 && waiting
	}) {
		t.Fatalf("order not failed with its refund refused four times: %+v", tl)
	}
	if tl.Order.Error != "upload_missing" {
		t.Errorf("failed with %q, want upload_missing", tl.Order.Error)
	}

	if _, err := h.app.db.Exec(`DROP TRIGGER refunds_refused`); err != nil {
		t.Fatal(err)
	}
	for _, f := range dirFiles(t, away) {
		if err := os.Rename(f, filepath.Join(uploads, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	var out map[string]any
	if status := h.adminJSON("POST", "/admin/orders/"+id+"/retry", &out); status != 200 || out["ok"] != true {
		t.Fatalf("retry: %d %v", status, out)
	}
	link := h.waitForLinkOf("sst", sessionID, 30*time.Second)
	if dl := h.get(link); dl.status != 200 || !bytes.Contains(dl.body, []byte("Hello from Parla.")) {
		t.Errorf("retried order's download: %d %s", dl.status, dl.body)
	}
	if refunds, _ := h.app.test.Refunds(context.Background()); len(refunds) != 0 {
		t.Errorf("the retried order was refunded too: %+v", refunds)
	}
	// A second retry is refused: the order is no longer failed.
	if status := h.adminJSON("POST", "/admin/orders/"+id+"/retry", &out); status != 409 {
		t.Errorf("retrying a delivered order: %d %v", status, out)
	}
}

func TestHashPasswordAndAdminConfig(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := hashPassword(strings.NewReader("a long enough password\n"), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	hash := strings.TrimSpace(out.String())
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte("a long enough password")) != nil {
		t.Errorf("the printed hash %q does not match the password", hash)
	}
	if code := hashPassword(strings.NewReader("short\n"), &out, &errOut); code != 2 {
		t.Errorf("a short password: exit %d", code)
	}
	tests := []struct {
		name string
		env  map[string]string
		bad  string
	}{
		{"short token", map[string]string{"ADMIN_TOKEN": "too-short"}, "ADMIN_TOKEN"},
		{"not bcrypt", map[string]string{"ADMIN_PASSWORD_HASH": "plain text"}, "ADMIN_PASSWORD_HASH"},
		{"both good", map[string]string{"ADMIN_PASSWORD_HASH": hash, "ADMIN_TOKEN": e2eAdminToken}, ""},
		{"short session key", map[string]string{"ADMIN_SESSION_KEY": "too-short"}, "ADMIN_SESSION_KEY"},
		{"session key good", map[string]string{"ADMIN_PASSWORD_HASH": hash, "ADMIN_SESSION_KEY": strings.Repeat("k", 32)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadConfig(envOf(tt.env))
			if (tt.bad == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.bad)) {
				t.Errorf("err = %v, want one about %q", err, tt.bad)
			}
		})
	}
}

// stripeCounter sits in front of stripe-mock (which keeps no state) and counts the refunds
// the app asks Stripe for, with their idempotency keys.
type stripeCounter struct {
	*httptest.Server
	mu      sync.Mutex
	refunds []string
}

func startStripeCounter(t testing.TB, mock string) *stripeCounter {
	target, err := url.Parse(mock)
	if err != nil {
		t.Fatal(err)
	}
	c := &stripeCounter{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/refunds" {
			c.mu.Lock()
			c.refunds = append(c.refunds, r.Header.Get("Idempotency-Key"))
			c.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *stripeCounter) refundKeys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.refunds...)
}

// With Stripe (stripe-mock): the operator's refund reaches Stripe once, with the order's
// idempotency key, even when clicked in two tabs and again as a script.
func TestAdminRefundThroughStripeOnce(t *testing.T) {
	requireMediaTools(t)
	stripeAPI := startStripeCounter(t, testkit.StartStripeMock(t))
	const secret = "whsec_parla_admin_test"
	h := startApp(t, adminEnv(t, map[string]string{"STRIPE_SECRET_KEY": "sk_test_parla", "STRIPE_WEBHOOK_SECRET": secret,
		"STRIPE_PUBLISHABLE_KEY": "pk_test_parla", "STRIPE_API_BASE": stripeAPI.URL}))
	sessionID, _ := h.checkout(ttsOrder("Refunded by the operator through Stripe.", "onyx", "mp3", 1, "s@example.com", "en"))
	event := []byte(fmt.Sprintf(`{"id":"evt_admin_paid","object":"event","type":"checkout.session.completed","created":%d,
		"api_version":"2023-10-16","data":{"object":{"id":%q,"object":"checkout.session","payment_status":"paid",
		"status":"complete","payment_intent":"pi_parla_admin","amount_total":99,"currency":"eur","client_reference_id":"",
		"customer_details":{"email":"s@example.com","name":"S"},"metadata":{}}}}`, time.Now().Unix(), sessionID))
	h.wantStatus(h.do("POST", "/webhooks/stripe", "application/json", event,
		map[string]string{"Stripe-Signature": testkit.SignPayload(event, secret, time.Now())}), 200)
	h.waitForLink(sessionID, 30*time.Second)
	id := h.orderIDOf(sessionID)

	op := h.adminSignIn()
	op.act(id, "refund", "tab-1", nil)
	op.act(id, "refund", "tab-2", nil)
	var out map[string]any
	if status := h.adminJSON("POST", "/admin/orders/"+id+"/refund", &out); status != 200 || out["result"] != "ok: already refunded" {
		t.Errorf("refund by script after: %d %v", status, out)
	}
	if keys := stripeAPI.refundKeys(); len(keys) != 1 || keys[0] != "refund-"+id {
		t.Errorf("refunds asked of Stripe: %v, want one with key refund-%s", keys, id)
	}
}
