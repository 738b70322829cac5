package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parla/providers"
)

func newDisk(t *testing.T) *Disk {
	t.Helper()
	d, err := NewDisk(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDiskRoundTrip(t *testing.T) {
	ctx := context.Background()
	d := newDisk(t)
	body := []byte("hello, parla")
	if err := d.Put(ctx, "results/ord_1.mp3", bytes.NewReader(body), int64(len(body)), "audio/mpeg"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	obj, err := d.Get(ctx, "results/ord_1.mp3")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	got, err := io.ReadAll(obj.Body)
	obj.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, body) || obj.Size != int64(len(body)) {
		t.Fatalf("Get = %q (size %d), want %q (size %d)", got, obj.Size, body, len(body))
	}

	// Overwrite with an unknown size.
	if err := d.Put(ctx, "results/ord_1.mp3", strings.NewReader("second"), -1, ""); err != nil {
		t.Fatalf("Put again: %v", err)
	}
	assertContent(t, d, "results/ord_1.mp3", "second")

	if err := d.Delete(ctx, "results/ord_1.mp3"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := d.Get(ctx, "results/ord_1.mp3"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
	}
	if err := d.Delete(ctx, "results/ord_1.mp3"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("second Delete = %v, want ErrNotFound", err)
	}
}

func TestDiskMissing(t *testing.T) {
	ctx := context.Background()
	d := newDisk(t)
	if err := d.Put(ctx, "file", strings.NewReader("x"), 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(d.Dir(), "dir"), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"nope", "deep/nope", "file/under-a-file", "dir"} {
		t.Run(key, func(t *testing.T) {
			if _, err := d.Get(ctx, key); !errors.Is(err, providers.ErrNotFound) {
				t.Fatalf("Get(%q) = %v, want ErrNotFound", key, err)
			}
			if err := d.Delete(ctx, key); !errors.Is(err, providers.ErrNotFound) {
				t.Fatalf("Delete(%q) = %v, want ErrNotFound", key, err)
			}
		})
	}
}

func TestDiskRejectsBadKeys(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	d, err := NewDisk(filepath.Join(parent, "files"))
	if err != nil {
		t.Fatal(err)
	}
	// A file next to the storage directory that a traversal would reach.
	if err := os.WriteFile(filepath.Join(parent, "x"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"../x", "/abs", "", "a/../../b", "a/../../x", "..", ".tmp/put-1", `..\x`, "a\x00"} {
		t.Run(key, func(t *testing.T) {
			if err := d.Put(ctx, key, strings.NewReader("x"), 1, ""); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
			}
			if _, err := d.Get(ctx, key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Get(%q) = %v, want ErrInvalidKey", key, err)
			}
			if err := d.Delete(ctx, key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Delete(%q) = %v, want ErrInvalidKey", key, err)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(parent, "x")); err != nil || string(b) != "secret" {
		t.Fatalf("file outside the storage directory changed: %q, %v", b, err)
	}
}

// failingReader yields some bytes and then an error, like a client that hangs up.
type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("connection reset")
	}
	n := min(len(p), f.n)
	for i := range p[:n] {
		p[i] = 'a'
	}
	f.n -= n
	return n, nil
}

func TestDiskPutIsAtomic(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		put  func(d *Disk, key string) error
	}{
		{"failing reader", func(d *Disk, key string) error {
			return d.Put(ctx, key, &failingReader{n: 100_000}, -1, "")
		}},
		{"short body", func(d *Disk, key string) error {
			return d.Put(ctx, key, strings.NewReader("abc"), 10, "")
		}},
		{"long body", func(d *Disk, key string) error {
			return d.Put(ctx, key, strings.NewReader("abcdefghijkl"), 10, "")
		}},
		{"cancelled", func(d *Disk, key string) error {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return d.Put(ctx, key, strings.NewReader("abc"), 3, "")
		}},
		{"cancelled midway", func(d *Disk, key string) error {
			ctx, cancel := context.WithCancel(ctx)
			r := &cancelAfter{r: &failingReader{n: 1 << 30}, left: 3, cancel: cancel}
			return d.Put(ctx, key, r, -1, "")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDisk(t)
			if err := tc.put(d, "new/key"); err == nil {
				t.Fatal("Put succeeded, want an error")
			}
			if _, err := d.Get(ctx, "new/key"); !errors.Is(err, providers.ErrNotFound) {
				t.Fatalf("Get after failed Put = %v, want ErrNotFound", err)
			}
			// A failed overwrite leaves the old object whole.
			if err := d.Put(ctx, "old", strings.NewReader("old content"), -1, ""); err != nil {
				t.Fatal(err)
			}
			if err := tc.put(d, "old"); err == nil {
				t.Fatal("overwriting Put succeeded, want an error")
			}
			assertContent(t, d, "old", "old content")
			// No temp file left behind either.
			left, err := os.ReadDir(filepath.Join(d.Dir(), tmpDirName))
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Fatalf("temp files left: %v", left)
			}
		})
	}
}

// cancelAfter cancels its context after left reads.
type cancelAfter struct {
	r      io.Reader
	left   int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	c.left--
	if c.left == 0 {
		c.cancel()
	}
	return c.r.Read(p)
}

func TestDiskPresignGet(t *testing.T) {
	d := newDisk(t)
	if _, err := d.PresignGet(context.Background(), "k", "a.mp3", time.Minute); !errors.Is(err, providers.ErrNoPresign) {
		t.Fatalf("PresignGet = %v, want ErrNoPresign", err)
	}
}

func TestDiskList(t *testing.T) {
	ctx := context.Background()
	d := newDisk(t)
	for _, k := range []string{"results/a", "results/b/c", "uploads/u1", "resultsx"} {
		if err := d.Put(ctx, k, strings.NewReader(k), -1, ""); err != nil {
			t.Fatal(err)
		}
	}
	// A write in progress must not show up.
	if err := os.WriteFile(filepath.Join(d.Dir(), tmpDirName, "put-x"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"results/a", "results/b/c", "resultsx", "uploads/u1"}},
		{"results/", []string{"results/a", "results/b/c"}},
		{"results", []string{"results/a", "results/b/c", "resultsx"}},
		{"results/b", []string{"results/b/c"}},
		{"none/", nil},
		{"upl", []string{"uploads/u1"}},
	}
	for _, tc := range tests {
		t.Run(tc.prefix, func(t *testing.T) {
			got, err := d.List(ctx, tc.prefix)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, e := range got {
				keys = append(keys, e.Key)
				if e.Size != int64(len(e.Key)) || time.Since(e.ModTime) > time.Minute {
					t.Errorf("entry %+v: wrong size or time", e)
				}
			}
			if strings.Join(keys, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("List(%q) = %v, want %v", tc.prefix, keys, tc.want)
			}
		})
	}
	for _, bad := range []string{"../", "/x", ".tmp/", "a/.."} {
		if _, err := d.List(ctx, bad); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("List(%q) = %v, want ErrInvalidKey", bad, err)
		}
	}
}

func TestNewDiskRemovesStaleTempFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	d := newDiskAt(t, dir)
	stale := filepath.Join(d.Dir(), tmpDirName, "put-stale")
	fresh := filepath.Join(d.Dir(), tmpDirName, "put-fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTmpAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	newDiskAt(t, dir)
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temp file still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp file removed: %v", err)
	}
}

func newDiskAt(t *testing.T, dir string) *Disk {
	t.Helper()
	d, err := NewDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type getter interface {
	Get(ctx context.Context, key string) (providers.Object, error)
}

func assertContent(t *testing.T, s getter, key, want string) {
	t.Helper()
	obj, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer obj.Body.Close()
	got, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatalf("reading %q: %v", key, err)
	}
	if string(got) != want || obj.Size != int64(len(want)) {
		t.Fatalf("Get(%q) = %q (size %d), want %q", key, got, obj.Size, want)
	}
}

// Check passes on a writable directory and fails, saying so, when its temp directory
// cannot take a file (replaced by a file: root ignores permission bits).
func TestDiskCheck(t *testing.T) {
	d, err := NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := d.Check(ctx); err != nil {
		t.Fatalf("Check on a fresh directory: %v", err)
	}
	if entries, _ := os.ReadDir(d.tmp); len(entries) != 0 {
		t.Errorf("Check left %d files behind", len(entries))
	}
	if err := os.RemoveAll(d.tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.tmp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(ctx); err == nil || !strings.Contains(err.Error(), "disk storage") {
		t.Fatalf("Check on a broken directory = %v, want an error", err)
	}
}
