package mail_test

import (
	"bytes"
	"context"
	"errors"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/mail"
	"parla/providers/testkit"
)

// parsedMail is a received message taken apart the way a mail client would.
type parsedMail struct {
	Header  netmail.Header
	Subject string // RFC 2047 decoded
	Text    string // text/plain part, transfer encoding undone
	HTML    string // text/html part, transfer encoding undone
}

func parseMail(t *testing.T, raw []byte) parsedMail {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("reading message: %v\n%s", err, raw)
	}
	var p parsedMail
	p.Header = msg.Header
	p.Subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("decoding subject %q: %v", msg.Header.Get("Subject"), err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/alternative" {
		t.Fatalf("Content-Type %q (%v), want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	var order []string
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading part: %v", err)
		}
		ct, cp, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil {
			t.Fatalf("part Content-Type %q: %v", part.Header.Get("Content-Type"), err)
		}
		if !strings.EqualFold(cp["charset"], "utf-8") {
			t.Errorf("%s part charset %q, want UTF-8", ct, cp["charset"])
		}
		body, err := io.ReadAll(part) // multipart undoes quoted-printable
		if err != nil {
			t.Fatalf("reading %s part: %v", ct, err)
		}
		order = append(order, ct)
		switch ct {
		case "text/plain":
			p.Text = strings.ReplaceAll(string(body), "\r\n", "\n")
		case "text/html":
			p.HTML = strings.ReplaceAll(string(body), "\r\n", "\n")
		default:
			t.Errorf("unexpected part %s", ct)
		}
	}
	// Plain text first: clients show the last alternative they understand.
	if strings.Join(order, ",") != "text/plain,text/html" {
		t.Errorf("parts %v, want text/plain then text/html", order)
	}
	return p
}

// checkSame asserts that what arrived is what was rendered.
func checkSame(t *testing.T, got parsedMail, want providers.Message) {
	t.Helper()
	if got.Subject != want.Subject {
		t.Errorf("subject %q, want %q", got.Subject, want.Subject)
	}
	if strings.TrimRight(got.Text, "\n") != strings.TrimRight(want.Text, "\n") {
		t.Errorf("text part differs:\n got %q\nwant %q", got.Text, want.Text)
	}
	if strings.TrimRight(got.HTML, "\n") != strings.TrimRight(want.HTML, "\n") {
		t.Errorf("html part differs:\n got %q\nwant %q", got.HTML, want.HTML)
	}
}

func newSMTP(t *testing.T, rawURL string, edit func(*mail.SMTPConfig)) *mail.SMTP {
	t.Helper()
	cfg, err := mail.ParseSMTPURL(rawURL)
	if err != nil {
		t.Fatalf("ParseSMTPURL(%q): %v", rawURL, err)
	}
	cfg.Timeout = 5 * time.Second
	if edit != nil {
		edit(&cfg)
	}
	s, err := mail.NewSMTP(cfg)
	if err != nil {
		t.Fatalf("NewSMTP: %v", err)
	}
	return s
}

func TestSMTPRoundTrip(t *testing.T) {
	srv := testkit.StartSMTP(t)
	sender := newSMTP(t, srv.URL()+"&from=Parla%20%3Corders%40parla.example%3E", nil)
	expires := time.Date(2026, time.March, 12, 14, 5, 0, 0, time.UTC)

	tests := []struct {
		locale  string
		service string // the localized service name the subject must carry
		date    string // the localized expiry
		dir     string
	}{
		{"en", "video transcription", "March 12, 2026 at 14:05 UTC", "ltr"},
		{"jp", "動画の文字起こし", "2026年3月12日 14:05（UTC）", "ltr"},
		{"es", "transcripción de vídeo", "12 de marzo de 2026, a las 14:05 (UTC)", "ltr"},
		{"ru", "Видео в текст", "12 марта 2026 г., 14:05 (UTC)", "ltr"},
		{"zh", "视频转文字", "2026年3月12日 14:05（UTC）", "ltr"},
		{"ar", "تحويل الفيديو إلى نص", "12 مارس 2026، الساعة 14:05 (UTC)", "rtl"},
	}
	for i, tt := range tests {
		t.Run(tt.locale, func(t *testing.T) {
			link := "https://parla.example/d/tok-" + tt.locale + "?a=1&b=2"
			m, err := mail.Render(mail.Delivered, tt.locale, mail.Data{
				Service: providers.VTT, Link: link, ExpiresAt: expires, OrderRef: "ord_" + tt.locale,
			})
			if err != nil {
				t.Fatal(err)
			}
			m.To = "visitor+" + tt.locale + "@example.com"
			if err := sender.Send(context.Background(), m); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := srv.WaitForMessages(t, i+1, 5*time.Second)[i]

			if got.From != "orders@parla.example" || len(got.To) != 1 || got.To[0] != m.To {
				t.Errorf("envelope from %q to %v", got.From, got.To)
			}
			if got.User != testkit.SMTPUser {
				t.Errorf("authenticated as %q, want %q", got.User, testkit.SMTPUser)
			}
			p := parseMail(t, got.Data)
			checkSame(t, p, m)
			if from, err := netmail.ParseAddress(p.Header.Get("From")); err != nil || from.Address != "orders@parla.example" || from.Name != "Parla" {
				t.Errorf("From header %q (%v)", p.Header.Get("From"), err)
			}
			if to, err := netmail.ParseAddress(p.Header.Get("To")); err != nil || to.Address != m.To {
				t.Errorf("To header %q (%v)", p.Header.Get("To"), err)
			}
			if p.Header.Get("Message-Id") == "" || !strings.HasSuffix(strings.Trim(p.Header.Get("Message-Id"), "<>"), "@parla.example") {
				t.Errorf("Message-ID %q", p.Header.Get("Message-Id"))
			}
			if _, err := p.Header.Date(); err != nil {
				t.Errorf("Date header: %v", err)
			}
			if !strings.Contains(p.Subject, tt.service) {
				t.Errorf("subject %q lacks %q", p.Subject, tt.service)
			}
			for part, body := range map[string]string{"text": p.Text, "html": html.UnescapeString(p.HTML)} {
				for _, want := range []string{link, tt.date, "ord_" + tt.locale} {
					if !strings.Contains(body, want) {
						t.Errorf("%s part lacks %q:\n%s", part, want, body)
					}
				}
			}
			if !strings.Contains(p.HTML, `href="https://parla.example/d/tok-`+tt.locale+`?a=1&amp;b=2"`) {
				t.Errorf("html part lacks the link as href:\n%s", p.HTML)
			}
			wantDir := `dir="` + tt.dir + `"`
			if !strings.Contains(p.HTML, wantDir) {
				t.Errorf("html part lacks %s", wantDir)
			}
			if tt.locale == "ar" && !strings.Contains(p.HTML, `<html lang="ar" dir="rtl">`) {
				t.Errorf("Arabic html lacks lang=ar dir=rtl on <html>:\n%s", p.HTML)
			}
		})
	}
}

func TestSMTPAuthFailure(t *testing.T) {
	srv := testkit.StartSMTP(t)
	sender := newSMTP(t, srv.URL(), func(c *mail.SMTPConfig) { c.Password = "wrong-password" })
	m, err := mail.Render(mail.Refunded, "en", mail.Data{Service: providers.TTS, OrderRef: "ord_1"})
	if err != nil {
		t.Fatal(err)
	}
	m.To = "visitor@example.com"
	err = sender.Send(context.Background(), m)
	if err == nil {
		t.Fatal("Send with a wrong password succeeded")
	}
	if !strings.Contains(err.Error(), "535") && !strings.Contains(strings.ToLower(err.Error()), "auth") {
		t.Errorf("error does not say authentication failed: %v", err)
	}
	for _, secret := range []string{"wrong-password", "visitor@example.com"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q leaks %q", err, secret)
		}
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("server received %d message(s)", n)
	}
}

func TestSMTPRefusesHeaderInjection(t *testing.T) {
	srv := testkit.StartSMTP(t)
	sender := newSMTP(t, srv.URL(), nil)
	outbox, err := mail.NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := providers.Message{To: "visitor@example.com", Subject: "Hello", Text: "body", HTML: "<p>body</p>"}
	tests := []struct {
		name    string
		edit    func(m *providers.Message)
		wantErr error
	}{
		{"CRLF in To", func(m *providers.Message) { m.To = "visitor@example.com\r\nBcc: evil@example.net" }, mail.ErrBadHeader},
		{"LF in To", func(m *providers.Message) { m.To = "visitor@example.com\nBcc: evil@example.net" }, mail.ErrBadHeader},
		{"CR in To", func(m *providers.Message) { m.To = "visitor@example.com\r" }, mail.ErrBadHeader},
		{"CRLF in Subject", func(m *providers.Message) { m.Subject = "Hi\r\nBcc: evil@example.net" }, mail.ErrBadHeader},
		{"LF in Subject", func(m *providers.Message) { m.Subject = "Hi\n\n<html>spoofed" }, mail.ErrBadHeader},
		{"CR in Subject", func(m *providers.Message) { m.Subject = "Hi\rthere" }, mail.ErrBadHeader},
		{"U+2028 in To", func(m *providers.Message) { m.To = "visitor\u2028@example.com" }, mail.ErrBadHeader},
		{"U+2029 in To", func(m *providers.Message) { m.To = "visitor@example.com\u2029Bcc: evil@example.net" }, mail.ErrBadHeader},
		{"U+0085 in To", func(m *providers.Message) { m.To = "visi\u0085tor@example.com" }, mail.ErrBadHeader},
		{"U+2028 in Subject", func(m *providers.Message) { m.Subject = "Hi\u2028Bcc: evil@example.net" }, mail.ErrBadHeader},
		{"two recipients", func(m *providers.Message) { m.To = "visitor@example.com, evil@example.net" }, mail.ErrBadAddress},
		{"not an address", func(m *providers.Message) { m.To = "visitor" }, mail.ErrBadAddress},
		{"empty To", func(m *providers.Message) { m.To = "" }, mail.ErrBadAddress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good
			tt.edit(&m)
			for name, sender := range map[string]providers.Mailer{"smtp": sender, "outbox": outbox} {
				err := sender.Send(context.Background(), m)
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("%s: got %v, want %v", name, err, tt.wantErr)
				}
				if err != nil && strings.Contains(err.Error(), "evil@example.net") {
					t.Errorf("%s: error repeats the address: %v", name, err)
				}
			}
		})
	}
	// Nothing may have reached the server or the outbox.
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("server received %d message(s)", n)
	}
	if files := emlFiles(t, outbox.Dir()); len(files) != 0 {
		t.Errorf("outbox wrote %v", files)
	}
	// The same sender still works, so the refusals above were about the headers.
	if err := sender.Send(context.Background(), good); err != nil {
		t.Fatalf("valid message refused: %v", err)
	}
	srv.WaitForMessages(t, 1, 5*time.Second)
}

func TestSMTPTLS(t *testing.T) {
	tests := []struct {
		name string
		opts []testkit.SMTPOption
	}{
		{"starttls required", []testkit.SMTPOption{testkit.SMTPStartTLS()}},
		{"implicit tls", []testkit.SMTPOption{testkit.SMTPImplicitTLS()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testkit.StartSMTP(t, tt.opts...)
			sender := newSMTP(t, srv.URL(), nil)
			m := providers.Message{To: "visitor@example.com", Subject: "Ünïcødé ✓", Text: "plain", HTML: "<p>html</p>"}
			if err := sender.Send(context.Background(), m); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := srv.WaitForMessages(t, 1, 5*time.Second)[0]
			if !got.TLS {
				t.Error("message travelled unencrypted")
			}
			if got.User != testkit.SMTPUser {
				t.Errorf("authenticated as %q", got.User)
			}
			if p := parseMail(t, got.Data); p.Subject != m.Subject {
				t.Errorf("subject %q, want %q", p.Subject, m.Subject)
			}

			// Without insecure_skip_verify the self-signed certificate is refused.
			strict := newSMTP(t, srv.URL(), func(c *mail.SMTPConfig) { c.InsecureSkipVerify = false })
			if err := strict.Send(context.Background(), m); err == nil {
				t.Error("self-signed certificate accepted without insecure_skip_verify")
			}
		})
	}
}

func TestSMTPStartTLSRequiredButNotOffered(t *testing.T) {
	srv := testkit.StartSMTP(t) // no STARTTLS
	sender := newSMTP(t, srv.URL(), func(c *mail.SMTPConfig) { c.TLS = mail.TLSRequired })
	err := sender.Send(context.Background(), providers.Message{To: "v@example.com", Subject: "s", Text: "t"})
	if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Errorf("got %v, want a STARTTLS error", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("server received %d message(s)", n)
	}
}

func TestSMTPOpportunisticWithoutTLS(t *testing.T) {
	srv := testkit.StartSMTP(t, testkit.SMTPNoAuth()) // a mail catcher: no TLS, no AUTH
	sender := newSMTP(t, srv.URL(), func(c *mail.SMTPConfig) { c.TLS = mail.TLSOpportunistic })
	if err := sender.Send(context.Background(), providers.Message{To: "v@example.com", Subject: "s", Text: "t", HTML: "<p>h</p>"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitForMessages(t, 1, 5*time.Second)[0]
	if got.TLS || got.User != "" {
		t.Errorf("TLS=%v user=%q, want plain unauthenticated", got.TLS, got.User)
	}
	if got.From != "no-reply@localhost" {
		t.Errorf("default sender %q", got.From)
	}
}

// TestSMTPHonoursContext talks to a server that accepts the connection and never answers:
// the deadline of ctx, not the (long) configured timeout, must end the call.
func TestSMTPHonoursContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	sender := newSMTP(t, "smtp://"+l.Addr().String()+"?starttls=none", func(c *mail.SMTPConfig) { c.Timeout = time.Minute })

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = sender.Send(ctx, providers.Message{To: "v@example.com", Subject: "s", Text: "t"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want context.DeadlineExceeded", err)
	}
	// The server never answers and the SMTP timeout is a minute: only the context ends
	// Send, and 30 s tells the two apart on a loaded runner too.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Send returned after %s", d)
	}

	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	if err := sender.Send(cancelled, providers.Message{To: "v@example.com", Subject: "s", Text: "t"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}
