package admin

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/riverqueue/river"
	"golang.org/x/crypto/bcrypt"

	"parla/api/orders"
	"parla/providers"
	"parla/providers/mail"
	"parla/providers/storage"
	"parla/providers/stripe"
	"parla/providers/testkit"
)

const (
	testPassword = "correct horse battery staple"
	testToken    = "tok_0123456789abcdef0123456789abcdef"
)

// fakeSpeaker stands in for an engine: the engines are tested in their packages.
type fakeSpeaker struct{}

func (fakeSpeaker) Available() error { return nil }
func (fakeSpeaker) Speak(_ context.Context, req providers.SpeechRequest, w io.Writer) error {
	_, err := io.WriteString(w, "ID3 fake audio for "+req.Voice)
	return err
}

type fixture struct {
	t      testing.TB
	app    *fiber.App
	admin  *Admin
	book   *orders.Book
	test   *stripe.TestCheckout
	outbox string
	db     interface {
		Exec(string, ...any) (sql.Result, error)
	}
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	dir := t.TempDir()
	db := testkit.OpenDB(t)
	tc, err := stripe.NewTestCheckout(db, "http://parla.test/checkout/test/", nil)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := storage.NewDisk(filepath.Join(dir, "files"))
	outbox := filepath.Join(dir, "outbox")
	mailer, _ := mail.NewOutbox(outbox)
	tmp := filepath.Join(dir, "tmp")
	os.MkdirAll(tmp, 0o755)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	book, err := orders.New(context.Background(), orders.Config{PublicURL: "http://parla.test", TempDir: tmp,
		TTS:       orders.TTSLimits{Voices: providers.Voices, Formats: providers.SpeechFormats, MinSpeed: 0.25, MaxSpeed: 4, MaxChars: 5000},
		RetryBase: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond, SweepInterval: time.Hour},
		orders.Deps{DB: db, Payments: tc, Storage: files, Mailer: mailer, Letters: orders.MailLetters{}, Speaker: fakeSpeaker{}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := book.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		book.Stop(stop)
		cancel()
	})
	cfg.Log = log
	if cfg.Jobs == nil {
		jobs, err := NewJobsUI(ctx, book.RiverClient().(*river.Client[*sql.Tx]), log)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Jobs = jobs
	}
	app := fiber.New()
	a := New(cfg, book.Operator())
	a.Mount(app)
	return &fixture{t: t, app: app, admin: a, book: book, test: tc, outbox: outbox, db: db}
}

func openConfig(t testing.TB) Config {
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return Config{PasswordHash: string(hash), Token: testToken}
}

// delivered places, pays and waits for one delivered order.
func (f *fixture) delivered() orders.Order {
	f.t.Helper()
	ctx := context.Background()
	co, err := f.book.Desk.CreateTTS(ctx, orders.TTSRequest{
		Params: orders.TTSParams{Voice: "nova", Format: "mp3", Speed: 1, Text: "Hello operator."},
		Email:  "visitor@example.com", EmailVerify: "visitor@example.com", Locale: "en"})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.test.Pay(ctx, co.SessionID); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.book.Cashier.Lookup(ctx, orders.TTS, co.SessionID); err != nil {
		f.t.Fatal(err)
	}
	var o orders.Order
	if !testkit.WaitFor(10*time.Second, func() bool {
		var err error
		if o, err = f.book.Operator().Get(ctx, co.OrderID); err != nil {
			f.t.Fatal(err)
		}
		return o.Status == orders.Done
	}) {
		f.t.Fatalf("order stuck in %s", o.Status)
	}
	return o
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (f *fixture) do(method, path string, form url.Values, header map[string]string) answer {
	f.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := f.app.Test(req, 10_000)
	if err != nil {
		f.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// signIn signs in with the password and returns the session cookie and the CSRF token.
func (f *fixture) signIn() (cookie, csrf string) {
	f.t.Helper()
	r := f.do("POST", "/admin/sign-in", url.Values{"password": {testPassword}}, nil)
	if r.status != 303 {
		f.t.Fatalf("sign-in: %d %s", r.status, r.body)
	}
	set := r.header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "path=/admin", "expires="} {
		if !strings.Contains(strings.ToLower(set), strings.ToLower(want)) {
			f.t.Errorf("session cookie lacks %s: %s", want, set)
		}
	}
	cookie = strings.SplitN(set, ";", 2)[0]
	page := f.do("GET", "/admin/orders", nil, map[string]string{"Cookie": cookie})
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page.body)
	if page.status != 200 || m == nil {
		f.t.Fatalf("orders page: %d, no CSRF token", page.status)
	}
	return cookie, m[1]
}

func TestClosedWithoutSecrets(t *testing.T) {
	f := newFixture(t, Config{})
	for _, p := range []string{"/admin", "/admin/orders", "/admin/jobs/"} {
		r := f.do("GET", p, nil, map[string]string{"Authorization": "Bearer " + testToken})
		if r.status != 404 || !strings.Contains(r.body, "The admin area is closed") {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
}

func TestNoOrWrongCredentialsAreRefused(t *testing.T) {
	f := newFixture(t, openConfig(t))
	tests := []struct {
		name   string
		method string
		path   string
		header map[string]string
		status int
	}{
		{"no credentials, page", "GET", "/admin/orders", nil, 303},
		{"no credentials, JSON", "GET", "/admin/orders", map[string]string{"Accept": "application/json"}, 401},
		{"no credentials, action", "POST", "/admin/orders/x/refund", nil, 401},
		{"wrong token", "GET", "/admin/orders", map[string]string{"Authorization": "Bearer " + strings.Repeat("x", 36)}, 401},
		{"not a bearer", "GET", "/admin/orders", map[string]string{"Authorization": "Basic YWRtaW46YWRtaW4="}, 401},
		{"forged cookie", "GET", "/admin/orders", map[string]string{"Cookie": "parla_admin=v1.9999999999.abc.password.forged", "Accept": "application/json"}, 401},
		{"jobs without sign-in", "GET", "/admin/jobs/", map[string]string{"Accept": "application/json"}, 401},
		{"jobs API without sign-in", "GET", "/admin/jobs/api/jobs?state=running", map[string]string{"Accept": "application/json"}, 401},
		{"right token", "GET", "/admin/orders", map[string]string{"Authorization": "Bearer " + testToken}, 200},
		{"jobs with the token", "GET", "/admin/jobs/", map[string]string{"Authorization": "Bearer " + testToken}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := f.do(tt.method, tt.path, nil, tt.header); r.status != tt.status {
				t.Errorf("%d, want %d: %.200s", r.status, tt.status, r.body)
			}
		})
	}
	r := f.do("POST", "/admin/sign-in", url.Values{"password": {"wrong password"}}, nil)
	if r.status != 401 || r.header.Get("Set-Cookie") != "" || !strings.Contains(r.body, "Wrong password") {
		t.Errorf("wrong password: %d %s", r.status, r.header.Get("Set-Cookie"))
	}
	// A cookie signed under another secret is not accepted.
	other := newSigner(strings.Repeat("y", 40), "")
	forged := other.cookie(session{Who: "password", Nonce: "n", Issued: time.Now(), Expires: time.Now().Add(time.Hour)})
	if r := f.do("GET", "/admin/orders", nil, map[string]string{"Cookie": cookieName + "=" + forged, "Accept": "application/json"}); r.status != 401 {
		t.Errorf("a cookie signed with another key: %d", r.status)
	}
	cookie, _ := f.signIn()
	if r := f.do("GET", "/admin/jobs/", nil, map[string]string{"Cookie": cookie}); r.status != 200 || !strings.Contains(r.body, "<html") {
		t.Errorf("River's UI when signed in: %d %.200s", r.status, r.body)
	}
}

func TestExpiredSessionIsRefused(t *testing.T) {
	k := newSigner("s", "")
	now := time.Now()
	c := k.cookie(session{Who: "password", Nonce: "n", Issued: now, Expires: now.Add(time.Minute)})
	if _, err := k.parseCookie(c, now, time.Hour); err != nil {
		t.Fatalf("fresh cookie: %v", err)
	}
	if _, err := k.parseCookie(c, now.Add(2*time.Minute), time.Hour); err == nil {
		t.Error("an expired cookie is accepted")
	}
	tampered := strings.Replace(c, ".password.", ".token.", 1)
	if _, err := k.parseCookie(tampered, now, time.Hour); err == nil {
		t.Error("a tampered cookie is accepted")
	}
}

func TestForgedOrMissingCSRFTokenIsRefused(t *testing.T) {
	f := newFixture(t, openConfig(t))
	o := f.delivered()
	cookie, csrf := f.signIn()
	other := newFixture(t, openConfig(t))
	_, otherCSRF := other.signIn() // a real token of another session
	for name, token := range map[string]string{"missing": "", "forged": "AAAA", "another session's": otherCSRF} {
		form := url.Values{"days": {"3"}, "once": {"x-" + name}}
		if token != "" {
			form.Set("csrf", token)
		}
		r := f.do("POST", "/admin/orders/"+o.ID+"/extend", form, map[string]string{"Cookie": cookie})
		if r.status != 403 {
			t.Errorf("%s CSRF token: %d, want 403", name, r.status)
		}
	}
	if r := f.do("POST", "/admin/sign-out", url.Values{}, map[string]string{"Cookie": cookie}); r.status != 403 {
		t.Errorf("sign-out without a token: %d", r.status)
	}
	got, _ := f.book.Operator().Get(context.Background(), o.ID)
	if !got.LinkExpiresAt.Equal(o.LinkExpiresAt) {
		t.Errorf("a refused form changed the order")
	}
	r := f.do("POST", "/admin/orders/"+o.ID+"/extend", url.Values{"days": {"3"}, "csrf": {csrf}, "once": {"ok"}},
		map[string]string{"Cookie": cookie})
	if r.status != 303 {
		t.Fatalf("with the session's token: %d %s", r.status, r.body)
	}
	// A sign-in posted from another site (login CSRF) is refused.
	r = f.do("POST", "/admin/sign-in", url.Values{"password": {testPassword}}, map[string]string{"Origin": "https://evil.example"})
	if r.status != 403 || r.header.Get("Set-Cookie") != "" {
		t.Errorf("cross-site sign-in: %d", r.status)
	}
	// River's UI changes jobs with JSON: a cross-site request is refused.
	r = f.do("POST", "/admin/jobs/api/jobs/retry", url.Values{}, map[string]string{"Cookie": cookie, "Origin": "https://evil.example"})
	if r.status != 403 {
		t.Errorf("cross-site request to River's UI: %d", r.status)
	}
}

func TestSignInFloodIsRateLimited(t *testing.T) {
	f := newFixture(t, openConfig(t))
	limited := 0
	for i := 0; i < 15; i++ {
		r := f.do("POST", "/admin/sign-in", url.Values{"password": {"guess"}}, nil)
		if r.status == 429 {
			limited++
		}
	}
	if limited != 5 {
		t.Errorf("%d of 15 attempts refused with 429, want the 5 past the limit of 10", limited)
	}
	// Even the right password waits for the window.
	if r := f.do("POST", "/admin/sign-in", url.Values{"password": {testPassword}}, nil); r.status != 429 {
		t.Errorf("right password during the flood: %d", r.status)
	}
	// Wrong bearer tokens count too.
	if r := f.do("GET", "/admin/orders", nil, map[string]string{"Authorization": "Bearer nope"}); r.status != 429 {
		t.Errorf("wrong token during the flood: %d", r.status)
	}
}

func TestLimiterHoldsAFloodFromManyAddresses(t *testing.T) {
	l := newLimiter(3, 5, time.Minute)
	now := time.Now()
	allowed := 0
	for i := 0; i < 10; i++ {
		if l.fail("192.0.2."+string(rune('0'+i)), now) {
			allowed++
		}
	}
	if allowed != 5 {
		t.Errorf("%d allowed from 10 addresses, want the global 5", allowed)
	}
	if !l.fail("192.0.2.0", now.Add(time.Minute)) {
		t.Error("the next window does not allow again")
	}
}

func TestEveryActionIsAudited(t *testing.T) {
	f := newFixture(t, openConfig(t))
	o := f.delivered()
	cookie, csrf := f.signIn()
	post := func(action string, form url.Values) answer {
		form.Set("csrf", csrf)
		return f.do("POST", "/admin/orders/"+o.ID+"/"+action, form, map[string]string{"Cookie": cookie})
	}
	steps := []struct {
		action string
		form   url.Values
	}{
		{"resend", url.Values{"to": {"again@example.org"}, "once": {"1"}}},
		{"resend", url.Values{"to": {"again@example.org"}, "once": {"1"}}}, // a double click
		{"extend", url.Values{"days": {"2"}, "once": {"2"}}},
		{"retry", url.Values{"once": {"3"}}}, // refused: not failed
		{"refund", url.Values{"once": {"4"}}},
	}
	for _, s := range steps {
		if r := post(s.action, s.form); r.status != 303 {
			t.Errorf("%s: %d %s", s.action, r.status, r.body)
		}
	}
	// A script with the token, in JSON.
	r := f.do("POST", "/admin/orders/"+o.ID+"/refund", url.Values{}, map[string]string{"Authorization": "Bearer " + testToken})
	var out map[string]any
	json.Unmarshal([]byte(r.body), &out)
	if r.status != 200 || out["result"] != "ok: already refunded" {
		t.Errorf("refund by token: %d %s", r.status, r.body)
	}
	r = f.do("GET", "/admin/audit", nil, map[string]string{"Authorization": "Bearer " + testToken})
	var audit struct {
		Audit []auditJSON `json:"audit"`
	}
	if err := json.Unmarshal([]byte(r.body), &audit); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(audit.Audit) - 1; i >= 0; i-- {
		e := audit.Audit[i]
		got = append(got, e.Actor+" "+e.Action+" "+strings.SplitN(e.Result, ":", 2)[0])
		if e.IP == "" || e.At.IsZero() || (e.Action != "sign_in" && e.OrderID != o.ID) {
			t.Errorf("entry %+v", e)
		}
	}
	want := []string{"password sign_in ok", "password resend ok", "password extend ok", "password retry refused",
		"password refund ok", "token refund ok"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("audit log:\n got %v\nwant %v", got, want)
	}
	refunds, _ := f.test.Refunds(context.Background())
	if len(refunds) != 1 {
		t.Errorf("%d refunds at the checkout, want 1", len(refunds))
	}
	entries, _ := os.ReadDir(f.outbox)
	if len(entries) != 2 {
		t.Errorf("%d letters, want the delivery and one resent (the double click sends nothing)", len(entries))
	}
	page := f.do("GET", "/admin/orders/"+o.ID+"?did=refund", nil, map[string]string{"Cookie": cookie})
	for _, want := range []string{"refunded", "Timeline", "e-mailed", "Characters", "refund — ok"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
}

func TestSearchAnswersHTMLAndJSON(t *testing.T) {
	f := newFixture(t, openConfig(t))
	o := f.delivered()
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	for _, q := range []string{o.ID, o.SessionID, o.PaymentIntent} {
		r := f.do("GET", "/admin/orders?q="+url.QueryEscape(q)+"&service=tts&state=delivered", nil, auth)
		var out struct {
			Orders []orderJSON `json:"orders"`
		}
		json.Unmarshal([]byte(r.body), &out)
		if r.status != 200 || len(out.Orders) != 1 || out.Orders[0].ID != o.ID {
			t.Errorf("search %q: %d %s", q, r.status, r.body)
		}
	}
	if r := f.do("GET", "/admin/orders?state=lost", nil, auth); r.status != 400 {
		t.Errorf("unknown state: %d", r.status)
	}
	cookie, _ := f.signIn()
	r := f.do("GET", "/admin/orders?q="+o.ID, nil, map[string]string{"Cookie": cookie})
	if r.status != 200 || !strings.Contains(r.body, `href="/admin/orders/`+o.ID+`"`) || !strings.Contains(r.body, "text/html") && r.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HTML search: %d %s", r.status, r.header.Get("Content-Type"))
	}
	if r := f.do("GET", "/admin/orders/nope", nil, auth); r.status != 404 {
		t.Errorf("unknown order: %d", r.status)
	}
}

// The operator reads on the orders page, first, which services are closed and what opens them.
func TestOrdersPageSaysWhichServicesAreClosed(t *testing.T) {
	cfg := openConfig(t)
	cfg.Closed = func() map[orders.Service]string {
		return map[orders.Service]string{orders.VTT: "no model; to open: models/download.sh base", orders.STT: "no model; to open: models/download.sh base"}
	}
	f := newFixture(t, cfg)
	cookie, _ := f.signIn()
	r := f.do("GET", "/admin/orders", nil, map[string]string{"Cookie": cookie})
	i, j := strings.Index(r.body, "audio to text</strong>: no model; to open: models/download.sh base"), strings.Index(r.body, "video to text</strong>")
	if !strings.Contains(r.body, `data-testid="closed-services"`) || i < 0 || j < i || strings.Contains(r.body, "text to speech</strong>") {
		t.Errorf("orders page lacks the closed services in order:\n%s", r.body)
	}
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	var out struct {
		Closed []closedService `json:"closed"`
	}
	json.Unmarshal([]byte(f.do("GET", "/admin/orders", nil, auth).body), &out)
	if len(out.Closed) != 2 || out.Closed[0].Service != orders.STT {
		t.Errorf("JSON closed = %+v", out.Closed)
	}
}
