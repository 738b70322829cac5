package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestMain does two things besides running the tests.
//
// Started with PARLA_TEST_RUN_MAIN=1, the test binary is not a test run but the server
// itself: startProcess re-executes it so that the crash and flood tests have a real
// process to kill or starve, without a separate build. PARLA_TEST_CRASH_AT names the
// fulfilment step at which it kills itself (SIGKILL, as kill -9 would).
//
// After a full run (no -run filter, not -short), it is the error-code sweep: the run
// fails unless every code of the API's error table was produced over HTTP by at least one
// test (see errorcodes_test.go), since a code no test produces is a code nobody knows to
// work.
func TestMain(m *testing.M) {
	if os.Getenv("PARLA_TEST_RUN_MAIN") == "1" {
		crashAt := os.Getenv("PARLA_TEST_CRASH_AT")
		os.Exit(run(func(_, step string) {
			if step == crashAt {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
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
