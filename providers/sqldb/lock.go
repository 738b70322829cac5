package sqldb

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// SQLite takes one process per database file: River's queue there assumes that every job
// marked running is this process's, so a second process started on the same DATA_DIR
// would take the first one's running jobs over at its boot and run them twice. The first
// process to open the file takes an exclusive lock (flock) on a lock file beside it,
// held until it closes the database or dies (the kernel releases it then, even after
// kill -9), and writes there who it is; a second one is refused with ErrInUse, naming
// the file and the holder.

// ErrInUse is OpenSQLite's error while another process holds the database.
var ErrInUse = errors.New("the SQLite database is in use by another process")

// lockSQLite takes the lock of the SQLite database at path for this process, or fails.
func lockSQLite(path string) (*os.File, error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file of %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 200))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is held by %s (lock file %s); SQLite takes one Parla process per "+
				"database: stop that process, give this one another DATA_DIR, or share a PostgreSQL "+
				"database (DATABASE_URL) between nodes", ErrInUse, path, holderOf(holder), name)
		}
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	host, _ := os.Hostname()
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(fmt.Sprintf("process %d on %s\n", os.Getpid(), host)), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the lock file of %s: %w", path, err)
	}
	return f, nil
}

// holderOf is who the lock file says holds it.
func holderOf(recorded []byte) string {
	who := strings.TrimSpace(strings.ToValidUTF8(string(recorded), "?"))
	if who == "" {
		return "another process"
	}
	return who
}
