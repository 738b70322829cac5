package mail_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/mail"
	"parla/providers/testkit"
)

// The Subject: header starts on its own line in every language (go-mail folded an encoded
// subject at once, and parsers read a leading space), and real parsers read it back whole:
// Go's net/mail with RFC 2047 decoding, and Python's email package (python3: without it
// the test skips after Go's checks outside CI and fails in CI, as a missing tool does).
func TestSubjectStartsOnItsLine(t *testing.T) {
	python := true
	dir := t.TempDir()
	outbox, err := mail.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, locale := range []string{"en", "es", "ru", "ar", "jp", "zh"} {
		m, err := mail.Render(mail.Delivered, locale, mail.Data{Service: providers.VTT, Link: "https://parla.example/d/t",
			ExpiresAt: time.Now().Add(240 * time.Hour), OrderRef: "ord_" + locale})
		if err != nil {
			t.Fatal(err)
		}
		m.To, m.ID = "visitor@example.com", "subject-"+locale
		if err := outbox.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		names, _ := filepath.Glob(filepath.Join(dir, "*subject-"+locale+"*.eml"))
		if len(names) != 1 {
			all, _ := os.ReadDir(dir)
			t.Fatalf("%s: no letter among %v", locale, all)
		}
		raw, err := os.ReadFile(names[0])
		if err != nil {
			t.Fatal(err)
		}
		line := subjectLine(raw)
		if !strings.HasPrefix(line, "Subject: ") || strings.TrimSpace(strings.TrimPrefix(line, "Subject:")) == "" ||
			strings.HasPrefix(line, "Subject:  ") {
			t.Errorf("%s: the subject does not start on its line: %q", locale, line)
		}
		if got := parseMail(t, raw).Subject; got != m.Subject {
			t.Errorf("%s: net/mail reads %q, want %q", locale, got, m.Subject)
		}
		got, ok := pythonSubject(t, raw)
		python = python && ok
		if ok && got != m.Subject {
			t.Errorf("%s: Python's email reads %q, want %q", locale, got, m.Subject)
		}
	}
	if !python {
		testkit.Missing(t, "python3 is not installed: Python's email package did not read the subjects")
	}
}

// subjectLine is the raw first line of the Subject field.
func subjectLine(raw []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "Subject:") {
			return sc.Text()
		}
	}
	return ""
}

// pythonSubject is the subject as Python's email package (the default policy) decodes it;
// ok is false when python3 is not installed.
func pythonSubject(t *testing.T, raw []byte) (string, bool) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return "", false
	}
	cmd := exec.Command(py, "-c", `import sys, email, email.policy
m = email.message_from_bytes(sys.stdin.buffer.read(), policy=email.policy.default)
sys.stdout.buffer.write(str(m["Subject"]).encode("utf-8"))`)
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return string(out), true
}
