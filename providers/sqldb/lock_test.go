package sqldb_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parla/providers/sqldb"
)

// One process per SQLite file: while a database is open, a second open of it (here from
// this process, through its own file description) is refused with ErrInUse, naming the
// file and the holder; closing the first lets the next one in.
func TestSQLiteOneOpenAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parla.db")
	first, err := sqldb.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sqldb.OpenSQLite(path)
	holder := fmt.Sprintf("process %d", os.Getpid())
	if !errors.Is(err, sqldb.ErrInUse) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), holder) {
		t.Fatalf("a second open while the first is open: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := sqldb.OpenSQLite(path)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Close()
}

// A second process is refused while the first holds the database, and takes it once the
// first is gone, even killed (the kernel drops its lock).
func TestSQLiteSecondProcessRefused(t *testing.T) {
	if path := os.Getenv("SQLDB_LOCK_HOLD"); path != "" {
		holdSQLite(path)
		return
	}
	path := filepath.Join(t.TempDir(), "parla.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteSecondProcessRefused$")
	cmd.Env = append(os.Environ(), "SQLDB_LOCK_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line := make([]byte, 64)
	if n, err := out.Read(line); err != nil || !strings.HasPrefix(string(line[:n]), "holding") {
		t.Fatalf("the holder said %q, %v", line[:n], err)
	}
	_, err = sqldb.OpenSQLite(path)
	holder := fmt.Sprintf("process %d", cmd.Process.Pid)
	if !errors.Is(err, sqldb.ErrInUse) || !strings.Contains(err.Error(), holder) || !strings.Contains(err.Error(), path) {
		t.Fatalf("open while process %d holds it: %v", cmd.Process.Pid, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	db, err := sqldb.OpenSQLite(path)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	db.Close()
}

// holdSQLite opens the database at path, says so on stdout, and holds it for a minute at
// most (the test kills it first).
func holdSQLite(path string) {
	db, err := sqldb.OpenSQLite(path)
	if err != nil {
		fmt.Println("failed:", err)
		os.Exit(1)
	}
	defer db.Close()
	fmt.Println("holding")
	time.Sleep(time.Minute)
}
