package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Children returns the ids of this process's live (not zombie) child processes, read from
// /proc; ok is false where there is no /proc.
func Children() (ids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	parent := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid …": comm may hold spaces and parentheses, so read the
		// fields after the last ")".
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == parent && fields[0] != "Z" {
			ids = append(ids, id)
		}
	}
	return ids, true
}

// NoChildren fails the test when child processes started during it (a stray ffmpeg or
// espeak-ng) outlive it by more than 10 seconds: a killed process is gone in milliseconds
// even on a loaded runner, and the strays this catches run until their input ends (or
// for ever). Waiting costs nothing when none is left. Tests that use it must not run in
// parallel with others that start processes.
func NoChildren(t testing.TB) {
	t.Helper()
	before, ok := Children()
	if !ok {
		return
	}
	t.Cleanup(func() {
		left := func() []int {
			ids, _ := Children()
			var out []int
			for _, id := range ids {
				if !slices.Contains(before, id) {
					out = append(out, id)
				}
			}
			return out
		}
		WaitFor(10*time.Second, func() bool { return len(left()) == 0 })
		if ids := left(); len(ids) > 0 {
			t.Errorf("processes left running: %v", ids)
		}
	})
}

// Pipe runs `first | second` as a shell would, with input on first's standard input, and
// fails tb when either fails (second's standard error in the message). Benchmarks use it
// for the bare espeak-ng | ffmpeg pipeline they measure the engine against.
func Pipe(tb testing.TB, input string, first, second *exec.Cmd) {
	tb.Helper()
	first.Stdin = strings.NewReader(input)
	pipe, err := first.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	second.Stdin = pipe
	var stderr bytes.Buffer
	second.Stderr = &stderr
	if err := first.Start(); err != nil {
		tb.Fatal(err)
	}
	if err := second.Run(); err != nil {
		first.Process.Kill()
		first.Wait()
		tb.Fatalf("%s: %v: %s", second.Path, err, stderr.String())
	}
	if err := first.Wait(); err != nil {
		tb.Fatalf("%s: %v", first.Path, err)
	}
}

// CPU returns the user and system time this process has used (self) and that of its
// finished, waited-for child processes (children), from getrusage. Benchmarks take the
// difference over a run to compare CPU time, which other work on a shared machine moves
// far less than wall-clock time.
func CPU() (self, children time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		children = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return self, children
}
