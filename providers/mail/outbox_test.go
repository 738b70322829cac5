package mail_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/mail"
)

func emlFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

var emlName = regexp.MustCompile(`^\d{8}T\d{6}\.\d{9}Z-[0-9a-f]{12}\.eml$`)

func TestOutbox(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox") // created by NewOutbox
	outbox, err := mail.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}

	var sent []providers.Message
	for _, tc := range []struct {
		kind   mail.Kind
		locale string
	}{{mail.Delivered, "jp"}, {mail.Refunded, "ar"}, {mail.Delivered, "ru"}, {mail.Refunded, "en"}} {
		m, err := mail.Render(tc.kind, tc.locale, mail.Data{
			Service: providers.TTS, Link: "https://parla.example/d/t", ExpiresAt: time.Now().Add(240 * time.Hour), OrderRef: "ord_9",
		})
		if err != nil {
			t.Fatal(err)
		}
		m.To = "visitor-" + tc.locale + "@example.com"
		if err := outbox.Send(context.Background(), m); err != nil {
			t.Fatalf("Send: %v", err)
		}
		sent = append(sent, m)
	}

	names := emlFiles(t, dir)
	if len(names) != len(sent) {
		t.Fatalf("outbox holds %v, want %d .eml files", names, len(sent))
	}
	if !slices.IsSorted(names) {
		t.Errorf("names not sorted: %v", names)
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("outbox directory mode %v is readable by others", st.Mode().Perm())
	}
	// os.ReadDir sorts by name, and names sort by time: file i is message i.
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			if !emlName.MatchString(name) {
				t.Errorf("name %q does not match %s", name, emlName)
			}
			path := filepath.Join(dir, name)
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm()&0o077 != 0 {
				t.Errorf("file mode %v is readable by others", info.Mode().Perm())
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			p := parseMail(t, raw)
			checkSame(t, p, sent[i])
			if got := p.Header.Get("To"); !strings.Contains(got, sent[i].To) {
				t.Errorf("To %q, want %q", got, sent[i].To)
			}
			if got := p.Header.Get("From"); !strings.Contains(got, "no-reply@localhost") {
				t.Errorf("From %q", got)
			}
		})
	}
}

func TestOutboxCancelledContext(t *testing.T) {
	dir := t.TempDir()
	outbox, err := mail.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = outbox.Send(ctx, providers.Message{To: "v@example.com", Subject: "s", Text: "t"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if names := emlFiles(t, dir); len(names) != 0 {
		t.Errorf("outbox wrote %v", names)
	}
}

func TestNewOutboxErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"empty": "", "below a file": filepath.Join(file, "outbox")} {
		t.Run(name, func(t *testing.T) {
			if _, err := mail.NewOutbox(dir); err == nil {
				t.Errorf("NewOutbox(%q) succeeded", dir)
			}
		})
	}
}

// A letter with an ID is written once: sent again (a retry after a crash between sending
// and recording), it is the same file with the same Message-ID.
func TestOutboxWritesALetterWithAnIDOnce(t *testing.T) {
	dir := t.TempDir()
	o, err := mail.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := providers.Message{ID: "parla.ord_1.delivered", To: "a@example.com", Subject: "Ready", Text: "Here."}
	for range 2 {
		if err := o.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "parla.ord_1.delivered.eml" {
		t.Fatalf("outbox holds %v", entries)
	}
	data, _ := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	if !strings.Contains(string(data), "Message-ID: <parla.ord_1.delivered@localhost>") {
		t.Errorf("no stable Message-ID:\n%s", data)
	}
	// Path tricks in an ID stay inside the outbox.
	evil := providers.Message{ID: "../../etc/x", To: "a@example.com", Subject: "S", Text: "T"}
	if err := o.Send(context.Background(), evil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "....etcx.eml")); err != nil {
		t.Errorf("an ID with slashes: %v", err)
	}
}
