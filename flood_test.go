package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
)

// startProcess runs the server as its own process, under the shell command prefix (for
// example a ulimit), on embedded defaults plus env, and returns its base URL.
func startProcess(t *testing.T, prefix string, env map[string]string) (string, *exec.Cmd) {
	t.Helper()
	addr := testkit.FreePort(t)
	cmd := exec.Command("sh", "-c", prefix+` exec "$0"`, os.Args[0])
	cmd.Env = append(os.Environ(), "PARLA_TEST_RUN_MAIN=1", "ADDR="+addr, "DATA_DIR="+t.TempDir(),
		"PUBLIC_URL=http://"+addr, "RATE_LIMIT=0", "LOG_LEVEL=warn")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			return base, cmd
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not come up")
		}
	}
}

// openFiles counts a process's open descriptors.
func openFiles(pid int) int {
	entries, _ := os.ReadDir(filepath.Join("/proc", fmt.Sprint(pid), "fd"))
	return len(entries)
}

// With soft and hard open-file limits of 256, a few hundred idle connections from one
// address neither stop the server nor starve other clients, and once they are gone the
// same address is served again.
func TestIdleFloodUnderLowFileLimit(t *testing.T) {
	base, cmd := startProcess(t, "ulimit -Sn 256 && ulimit -Hn 256 &&", nil)
	host := strings.TrimPrefix(base, "http://")
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	peak := 0
	for range 400 {
		c, err := net.DialTimeout("tcp", host, 2*time.Second)
		if err != nil {
			continue // refused while over the cap: fine, the server lives
		}
		flood = append(flood, c)
		peak = max(peak, openFiles(cmd.Process.Pid))
	}
	time.Sleep(200 * time.Millisecond)
	if peak >= 256 {
		t.Errorf("the server held %d descriptors under a limit of 256", peak)
	}
	// Another client (another loopback address) is served during the flood.
	other := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	resp, err := other.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz for another client during the flood: %v %v", resp, err)
	}
	resp.Body.Close()
	for _, c := range flood {
		c.Close()
	}
	flood = nil
	// Afterwards the flooding address itself is served, orders included.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		resp, err := http.Post(base+"/payment/tts/create-checkout-session", "application/json",
			strings.NewReader(`{"order":{"voice":"alloy","input":"After the flood.","format":"mp3","speed":1,"email":"f@example.com","emailVerify":"f@example.com","locale":"en"}}`))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
			t.Fatalf("order after the flood: %d", resp.StatusCode)
		}
		if ctx.Err() != nil {
			t.Fatalf("order after the flood: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cmd.ProcessState != nil {
		t.Fatalf("the server exited: %v", cmd.ProcessState)
	}
}
