package testkit

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// MinIOServer is a running MinIO server that only this test uses.
type MinIOServer struct {
	Endpoint  string // "127.0.0.1:port", plain http
	AccessKey string
	SecretKey string
}

// minioStartTimeout is how long StartMinIO waits for the health check. A cold start takes
// about a second on a laptop; CI machines under load are slower.
const minioStartTimeout = 30 * time.Second

// StartMinIO starts the real `minio server` binary on a free loopback port with an empty
// data directory and stops it when the test ends. Each call costs a fresh process (about a
// second and 100–200 MB of memory), so a package should start one server per top-level
// test and give subtests their own buckets rather than start one per subtest.
// It skips (or, in CI, fails) the test when minio is not installed.
func StartMinIO(t testing.TB) MinIOServer {
	t.Helper()
	bin := Binary(t, "minio")
	srv := MinIOServer{AccessKey: "parla-test", SecretKey: "parla-test-secret"}
	// The port from FreePort may be taken by someone else before minio binds it; try again
	// with another port when the process dies early.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		addr := FreePort(t)
		err := startMinIO(t, bin, addr, srv)
		if err == nil {
			srv.Endpoint = addr
			return srv
		}
		lastErr = err
	}
	t.Fatalf("starting minio: %v", lastErr)
	return MinIOServer{}
}

// startMinIO runs one attempt; on success the process is stopped by t.Cleanup.
func startMinIO(t testing.TB, bin, addr string, srv MinIOServer) error {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	console := FreePort(t)
	cmd := exec.Command(bin, "server",
		"--address", addr,
		"--console-address", console, // unused with the browser off, but must not clash
		"--certs-dir", filepath.Join(dir, "certs"), // keep away from ~/.minio
		"--quiet",
		data)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+srv.AccessKey,
		"MINIO_ROOT_PASSWORD="+srv.SecretKey,
		"MINIO_BROWSER=off", // no console UI to start
		"MINIO_UPDATE=off",  // no update check over the network
		"MINIO_CI_CD=1",     // accept a data dir on the root disk, skip drive checks meant for production
		"MINIO_CALLHOME_ENABLE=off",
		"HOME="+dir,
	)
	stderr := &tailBuffer{max: 4096}
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	// Its own process group, so stopping it never signals the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running %s: %w", bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		select {
		case <-exited:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), minioStartTimeout)
	defer cancel()
	health := "http://" + addr + "/minio/health/live"
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return fmt.Errorf("minio exited before answering (%v); output:\n%s", waitErr, stderr.String())
		case <-ctx.Done():
			stop()
			t.Fatalf("minio did not answer %s within %s; output:\n%s", health, minioStartTimeout, stderr.String())
		case <-tick.C:
		}
		if minioReady(ctx, health, addr, srv) {
			t.Cleanup(stop)
			return nil
		}
	}
}

// minioReady reports whether the server answers its liveness check and serves a signed
// request. Liveness alone turns 200 before the object layer and IAM are up, and the first
// requests would then fail with "Server not initialized yet".
func minioReady(ctx context.Context, health, addr string, srv MinIOServer) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, health, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Minio-Server-Status") == "offline" {
		return false
	}
	c, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		return false
	}
	_, err = c.ListBuckets(ctx)
	return err == nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.ToValidUTF8(b.buf, []byte("?")))
}
