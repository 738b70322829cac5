package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain does two things besides running the tests.
//
// Started with PARLA_TEST_RUN_MAIN=1, the test binary is not a test run but the server
// itself: startProcess re-executes it so that the crash and flood tests have a real
// process to kill or starve, without a separate build. PARLA_TEST_CRASH_AT names the
// fulfilment step at which it kills itself (SIGKILL, as kill -9 would);
// PARLA_TEST_FREEZE_FILE names a file the fault suite arms with "ORDER STEP": the first
// node to reach that step of that order takes the file and freezes (freezeAt).
//
// After a full run (no -run filter, not -short), it is the error-code sweep: the run
// fails unless every code of the API's error table was produced over HTTP by at least one
// test (see errorcodes_test.go), since a code no test produces is a code nobody knows to
// work.
func TestMain(m *testing.M) {
	if os.Getenv("PARLA_TEST_RUN_MAIN") == "1" {
		crashAt, freeze := os.Getenv("PARLA_TEST_CRASH_AT"), os.Getenv("PARLA_TEST_FREEZE_FILE")
		os.Exit(run(func(id, step string) {
			if step == crashAt {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
			if freeze != "" {
				freezeAt(freeze, id, step)
			}
		}))
	}
	flag.Parse()
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		if missing := unproducedErrorCodes(); len(missing) > 0 {
			fmt.Printf("FAIL: no test produced these error codes over HTTP: %v\n", missing)
			code = 1
		}
	}
	os.Exit(code)
}

// freezeAt stops this node and its engine processes (SIGSTOP to its process group, as a
// long pause would) when file names this order and step; the node that renames the file
// away first (to FILE.taken) is the one, so one node freezes once per arming. It stays
// stopped until the suite removes FILE.taken and continues it: a stray SIGCONT (seen
// within milliseconds of stopping itself at "mailed", sender unknown) stops it again. A node that leads
// no process group of its own (the fault suite starts them under setsid) does not freeze:
// its group would be the test's.
func freezeAt(file, id, step string) {
	if b, err := os.ReadFile(file); err != nil || strings.TrimSpace(string(b)) != id+" "+step {
		return
	}
	if os.Rename(file, file+".taken") != nil || syscall.Getpgrp() != os.Getpid() {
		return
	}
	for {
		syscall.Kill(-os.Getpid(), syscall.SIGSTOP)
		if _, err := os.Stat(file + ".taken"); err != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
