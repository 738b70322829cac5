// Package testkit starts the real programs the tests talk to (MinIO, PostgreSQL,
// stripe-mock, an SMTP server), finds the tools they need (ffmpeg, ffprobe, espeak-ng),
// makes spoken audio for them (audio.go) and checks that no child process outlives a test
// (procs.go). Outside CI a missing program skips the test with a reason; in CI (CI=true)
// it fails it, so a missing install step in .ci/run cannot hide behind a green run.
package testkit

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Binary returns the path of the named program, looked up in PATH and then in
// $GOPATH/bin (where .ci/run installs stripe-mock and minio).
func Binary(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	if gopath != "" {
		p := filepath.Join(gopath, "bin", name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	Missing(t, name+" is not installed (run .ci/run or see README)")
	return ""
}

// Missing skips the test outside CI and fails it in CI.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("required by CI: %s", reason)
	}
	t.Skip(reason)
}

// FreePort returns a loopback TCP address that was free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// LogBuffer collects what a program under test logs from its goroutines, for a test to
// read while it runs.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
