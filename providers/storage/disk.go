package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"parla/providers"
)

// tmpDirName holds files being written. Keys cannot start with a dot, so it can never
// clash with a stored object.
const tmpDirName = ".tmp"

// staleTmpAge is how old a leftover temp file must be before NewDisk removes it; younger
// ones may belong to another process writing right now.
const staleTmpAge = time.Hour

// Disk stores objects as files under one directory (DATA_DIR/files). Writes go to a temp
// file in the same file system and are renamed into place, so a reader sees either the
// whole object or none.
type Disk struct {
	dir string
	tmp string
}

var _ providers.Storage = (*Disk)(nil)

// NewDisk creates dir (and its temp subdirectory) if needed and removes temp files left
// over by a crash more than an hour ago.
func NewDisk(dir string) (*Disk, error) {
	if dir == "" {
		return nil, errors.New("disk storage: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("disk storage: resolving %s: %w", dir, err)
	}
	d := &Disk{dir: abs, tmp: filepath.Join(abs, tmpDirName)}
	if err := os.MkdirAll(d.tmp, 0o750); err != nil {
		return nil, fmt.Errorf("disk storage: creating %s: %w", d.tmp, err)
	}
	if entries, err := os.ReadDir(d.tmp); err == nil {
		for _, e := range entries {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTmpAge {
				os.Remove(filepath.Join(d.tmp, e.Name()))
			}
		}
	}
	return d, nil
}

// Dir returns the absolute directory the objects live in.
func (d *Disk) Dir() string { return d.dir }

func (d *Disk) path(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return filepath.Join(d.dir, filepath.FromSlash(key)), nil
}

// Put writes r under key. When size is not negative, r must yield exactly size bytes.
// contentType is not kept: whoever streams a disk object sets the type itself. A failing
// reader, a size mismatch or a cancelled ctx leaves no object behind (and an existing
// object under key untouched).
func (d *Disk) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (err error) {
	p, err := d.path(key)
	if err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	f, err := os.CreateTemp(d.tmp, "put-*")
	if err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var src io.Reader = ctxReader{ctx: ctx, r: r}
	if size >= 0 {
		src = io.LimitReader(src, size+1) // one byte more is enough to see a long body
	}
	n, err := io.Copy(f, src)
	if err != nil {
		return fmt.Errorf("putting %s: writing: %w", key, err)
	}
	if size >= 0 && n != size {
		return fmt.Errorf("putting %s: got %d bytes, expected %d", key, n, size)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	if err = os.Chmod(f.Name(), 0o640); err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	if err = ctx.Err(); err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	if err = os.Rename(f.Name(), p); err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	return nil
}

// Get opens the object under key; the caller closes Body. A missing key returns an error
// wrapping providers.ErrNotFound.
func (d *Disk) Get(ctx context.Context, key string) (providers.Object, error) {
	p, err := d.path(key)
	if err != nil {
		return providers.Object{}, fmt.Errorf("getting %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return providers.Object{}, fmt.Errorf("getting %s: %w", key, err)
	}
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return providers.Object{}, fmt.Errorf("getting %s: %w", key, providers.ErrNotFound)
		}
		return providers.Object{}, fmt.Errorf("getting %s: %w", key, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return providers.Object{}, fmt.Errorf("getting %s: %w", key, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return providers.Object{}, fmt.Errorf("getting %s: %w", key, providers.ErrNotFound)
	}
	return providers.Object{Body: f, Size: st.Size()}, nil
}

// Delete removes the object under key. A missing key returns an error wrapping
// providers.ErrNotFound. Emptied directories are left in place: removing them would race
// with a concurrent Put into the same directory.
func (d *Disk) Delete(ctx context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return fmt.Errorf("deleting %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deleting %s: %w", key, err)
	}
	st, err := os.Lstat(p)
	if err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("deleting %s: %w", key, providers.ErrNotFound)
	}
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("deleting %s: %w", key, providers.ErrNotFound)
		}
		return fmt.Errorf("deleting %s: %w", key, err)
	}
	return nil
}

// PresignGet always returns providers.ErrNoPresign: the app streams disk objects itself.
func (d *Disk) PresignGet(ctx context.Context, key, filename string, ttl time.Duration) (*url.URL, error) {
	return nil, providers.ErrNoPresign
}

// List returns the objects whose key starts with prefix, in lexical order of key. It
// walks the directory tree, so it suits the occasional sweep, not a request path.
func (d *Disk) List(ctx context.Context, prefix string) ([]Entry, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("listing %q: %w", prefix, err)
	}
	// Walk only the deepest directory the prefix names fully.
	root := d.dir
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		root = filepath.Join(d.dir, filepath.FromSlash(prefix[:i]))
	}
	var out []Entry
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p != root && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir // the temp directory
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(d.dir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted while walking
			}
			return err
		}
		out = append(out, Entry{Key: key, Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %q: %w", prefix, err)
	}
	return out, nil
}

// ctxReader stops a copy as soon as ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Check proves the directory takes writes: it creates and removes an empty file in the
// temp subdirectory (readiness probes call it every few seconds; it costs two syscalls).
func (d *Disk) Check(ctx context.Context) error {
	f, err := os.CreateTemp(d.tmp, "ready-*")
	if err != nil {
		return fmt.Errorf("disk storage: %w", err)
	}
	f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return fmt.Errorf("disk storage: %w", err)
	}
	return ctx.Err()
}
