package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"parla/providers/sqldb"
)

// PostgresServer is a throwaway PostgreSQL cluster that only this test uses.
type PostgresServer struct {
	Addr string // 127.0.0.1:port
	bin  string
	dir  string
	data string
	cred *syscall.Credential

	cmd    *exec.Cmd
	exited chan error
	log    *tailBuffer
}

// postgresBin finds a server program of Debian's postgresql package (initdb, postgres),
// which lives outside PATH under /usr/lib/postgresql/<version>/bin.
func postgresBin(name string) (string, error) {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s (Debian's postgresql package; run .ci/run or see README)", ErrNotInstalled, name)
}

// ErrNotInstalled is returned (wrapped) by NewPostgres when PostgreSQL is missing.
var ErrNotInstalled = errors.New("not installed")

// StartPostgres initialises a cluster in a fresh directory and starts it on a free
// loopback port with durability off (a test's data need not survive a power cut); it is
// stopped and removed when the test ends. PostgreSQL refuses to run as root, so as root
// the cluster belongs to the `postgres` user that Debian's package creates.
// It skips (or, in CI, fails) the test when PostgreSQL is not installed.
func StartPostgres(t testing.TB) *PostgresServer {
	t.Helper()
	srv, err := NewPostgres()
	if errors.Is(err, ErrNotInstalled) {
		Missing(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Remove)
	return srv
}

// NewPostgres is StartPostgres for a TestMain: the caller calls Remove when done.
func NewPostgres() (*PostgresServer, error) {
	initdb, err := postgresBin("initdb")
	if err != nil {
		return nil, err
	}
	postgres, err := postgresBin("postgres")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "parla-pg-")
	if err != nil {
		return nil, err
	}
	cred, err := serverUser(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("postgres: %w", err)
	}
	data := filepath.Join(dir, "data")
	init := exec.Command(initdb, "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync")
	init.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	init.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := init.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	srv := &PostgresServer{bin: postgres, dir: dir, data: data, cred: cred}
	for attempt := 0; attempt < 3; attempt++ {
		l, lerr := net.Listen("tcp", "127.0.0.1:0")
		if lerr != nil {
			err = lerr
			continue
		}
		srv.Addr = l.Addr().String()
		l.Close()
		if err = srv.start(); err == nil {
			return srv, nil
		}
	}
	os.RemoveAll(dir)
	return nil, fmt.Errorf("starting postgres: %w", err)
}

// Remove stops the server and deletes its data.
func (s *PostgresServer) Remove() {
	s.Down()
	os.RemoveAll(s.dir)
}

// serverUser returns the credential to run PostgreSQL with (nil: the current user) and
// hands dir to that user.
func serverUser(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// start runs the server on s.Addr and waits until it takes connections.
func (s *PostgresServer) start() error {
	_, port, _ := strings.Cut(s.Addr, ":")
	cmd := exec.Command(s.bin, "-D", s.data, "-p", port, "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=64MB")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	s.log = &tailBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.exited = cmd, make(chan error, 1)
	go func() { s.exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.url("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case err := <-s.exited:
			s.cmd = nil
			return fmt.Errorf("postgres exited: %v\n%s", err, s.log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Down()
			return fmt.Errorf("postgres not ready after 30 s: %v\n%s", err, s.log.String())
		}
	}
}

// Down stops the server ("fast" shutdown: open connections are cut); Up starts it again
// on the same port and data. Tests use the pair for a database that goes away.
func (s *PostgresServer) Down() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	s.cmd = nil
}

// Up starts a server stopped by Down.
func (s *PostgresServer) Up(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatalf("restarting postgres: %v", err)
	}
}

func (s *PostgresServer) url(db string) string {
	return "postgres://postgres@" + s.Addr + "/" + db + "?sslmode=disable"
}

// NewDatabase creates an empty database with a random name and returns its URL.
func (s *PostgresServer) NewDatabase(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		t.Fatalf("connecting to postgres: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database: %v", err)
	}
	return s.url(name)
}

// sharedPostgres is the server of a test binary run with PARLA_TEST_DB=postgres (RunWithDB).
var sharedPostgres *PostgresServer

// RunWithDB is a TestMain for the packages whose tests run on either database: with
// PARLA_TEST_DB=postgres it starts one PostgreSQL server for the whole binary, and OpenDB
// gives each test a fresh database on it; otherwise the tests use SQLite files.
func RunWithDB(m *testing.M) int {
	if os.Getenv("PARLA_TEST_DB") != "postgres" {
		return m.Run()
	}
	srv, err := NewPostgres()
	if err != nil {
		fmt.Fprintln(os.Stderr, "PARLA_TEST_DB=postgres:", err)
		return 1
	}
	defer srv.Remove()
	sharedPostgres = srv
	return m.Run()
}

// OpenDB opens the test's database: a fresh Postgres database under RunWithDB with
// PARLA_TEST_DB=postgres, else a SQLite file in the test's temporary directory. It is
// closed when the test ends.
func OpenDB(t testing.TB) *sqldb.DB {
	t.Helper()
	var db *sqldb.DB
	var err error
	if sharedPostgres != nil {
		db, err = sqldb.OpenPostgres(context.Background(), sharedPostgres.NewDatabase(t), sqldb.PostgresConfig{})
	} else {
		db, err = sqldb.OpenSQLite(filepath.Join(t.TempDir(), "parla.db"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
