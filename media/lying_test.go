package media

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parla/providers/testkit"
)

// TestLyingUploadRefusedAtItsHeader: the FLAC (66 KB, 10 h of 8 kHz audio, a
// header saying 60 s) is refused as lying, its decode stopped just past twice the header's
// length and 2 s: without decoding the 68 minutes its size would allow. Before issue 30 it
// was refused as too dense after decoding those 68 minutes.
func TestLyingUploadRefusedAtItsHeader(t *testing.T) {
	r := newRunner(t)
	path := filepath.Join(t.TempDir(), "lying.flac")
	testkit.LyingFLAC(t, path, 8000, 10*time.Hour, time.Minute)
	st, _ := os.Stat(path)
	start, cpu := time.Now(), childCPU()
	_, err := r.CheckUpload(context.Background(), path, 3*time.Hour)
	if !errors.Is(err, ErrDurationMismatch) {
		t.Fatalf("%d bytes, 10 h behind a 60 s header: %v; want ErrDurationMismatch", st.Size(), err)
	}
	t.Logf("%d bytes: %v in %v (%v of CPU)", st.Size(), err, time.Since(start), childCPU()-cpu)
}

// TestCheckPaidStopsAtThePaidLength: after payment the decode goes no further than the
// paid length and its margin (EngineLimit), whatever the file holds: 10 h behind a header
// that says 60 s is refused as longer than paid (ErrTooLong), a file within the margin is
// measured whole.
func TestCheckPaidStopsAtThePaidLength(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	ctx := context.Background()
	lying := filepath.Join(dir, "lying.flac")
	testkit.LyingFLAC(t, lying, 8000, 10*time.Hour, time.Minute)
	start, cpu := time.Now(), childCPU()
	if _, err := r.CheckPaid(ctx, lying, time.Minute); !errors.Is(err, ErrTooLong) {
		t.Fatalf("10 h paid as 60 s: %v; want ErrTooLong", err)
	}
	t.Logf("refused in %v (%v of CPU)", time.Since(start), childCPU()-cpu)
	sine := filepath.Join(dir, "sine.wav")
	testkit.Run(t, testkit.Binary(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-f", "lavfi",
		"-i", "sine=frequency=400:sample_rate=16000:duration=12", "file:"+sine)
	if _, err := r.CheckPaid(ctx, sine, 5*time.Second); !errors.Is(err, ErrTooLong) {
		t.Errorf("12 s paid as 5 s: %v; want ErrTooLong", err)
	}
	m, err := r.CheckPaid(ctx, sine, 11*time.Second) // 12 s is within 11 s + 1 % + 2 s
	if err != nil || m.Length != 12*time.Second {
		t.Errorf("12 s paid as 11 s: %+v, %v", m, err)
	}
}

// TestRemoteBoundsLimit: the decode of a link stops at the smallest of its bounds, and
// says which it passed.
func TestRemoteBoundsLimit(t *testing.T) {
	tests := []struct {
		b     RemoteBounds
		limit time.Duration
		past  error
	}{
		{RemoteBounds{Claimed: time.Minute}, 62 * time.Second, ErrDurationMismatch},
		{RemoteBounds{Claimed: time.Hour}, time.Hour + 72*time.Second, ErrDurationMismatch},
		{RemoteBounds{Claimed: time.Hour, Longest: 30 * time.Minute}, 30 * time.Minute, ErrTooLong},
		{RemoteBounds{Claimed: time.Hour, Size: 16 * 600}, 10 * time.Minute, ErrTooDense},
		{RemoteBounds{Claimed: time.Minute, Longest: 3 * time.Hour, Size: 64 << 10}, 62 * time.Second, ErrDurationMismatch},
	}
	for _, tt := range tests {
		limit, past := tt.b.limit()
		if limit != tt.limit || past != tt.past {
			t.Errorf("%+v: %v, %v; want %v, %v", tt.b, limit, past, tt.limit, tt.past)
		}
	}
}

// TestIdleCommand: a visitor's processes run through nice at the lowest priority, and are
// the program itself (nice execs it).
func TestIdleCommand(t *testing.T) {
	name, args := IdleCommand("/usr/bin/nice", "/usr/bin/ffmpeg", []string{"-i", "x"})
	if name != "/usr/bin/nice" || strings.Join(args, " ") != "-n 19 /usr/bin/ffmpeg -i x" {
		t.Errorf("got %s %q", name, args)
	}
	if name, args := IdleCommand("", "ffmpeg", []string{"-i"}); name != "ffmpeg" || len(args) != 1 {
		t.Errorf("without nice: %s %q", name, args)
	}
}

// TestRunIdleIsNiced: a process runIdle starts reads its own niceness as 19.
func TestRunIdleIsNiced(t *testing.T) {
	var out strings.Builder
	// Field 19 of /proc/<pid>/stat is the niceness.
	err := runIdle(context.Background(), "sh", []string{"-c", `cut -d" " -f19 /proc/$$/stat`}, nil, &out)
	if err != nil || strings.TrimSpace(out.String()) != "19" {
		t.Fatalf("niceness %q, %v; want 19", out.String(), err)
	}
}
