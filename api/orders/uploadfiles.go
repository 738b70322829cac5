package orders

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"parla/providers"
)

// uploadFiles is where accepted upload files live: a directory of this node (one node,
// SQLite), or the object store every node of a cluster reads (Postgres: the upload is
// received by one node and transcribed by a job on any other).
type uploadFiles interface {
	// keep takes the checked file at path (it is moved or copied and removed).
	keep(ctx context.Context, id, path string, size int64) error
	// exists reports an error wrapping ErrUploadNotFound when the file is gone.
	exists(ctx context.Context, id string) error
	// local gives a path on this node's disk to read the file from, and what to call
	// when done with it.
	local(ctx context.Context, id string) (path string, done func(), err error)
	// remove deletes the file; a missing file is no error.
	remove(ctx context.Context, id string) error
}

// fileGone is the error for an upload whose file is not there.
func fileGone(id string) error {
	return fmt.Errorf("%w: the file of %s is gone", ErrUploadNotFound, uploadRef(id))
}

// diskUploads keeps upload files in a directory, one file per upload id.
type diskUploads struct{ dir string }

func (d diskUploads) path(id string) string { return filepath.Join(d.dir, id) }

func (d diskUploads) keep(_ context.Context, id, path string, _ int64) error {
	return os.Rename(path, d.path(id))
}

func (d diskUploads) exists(_ context.Context, id string) error {
	if _, err := os.Stat(d.path(id)); err != nil {
		return fileGone(id)
	}
	return nil
}

func (d diskUploads) local(ctx context.Context, id string) (string, func(), error) {
	return d.path(id), func() {}, d.exists(ctx, id)
}

func (d diskUploads) remove(_ context.Context, id string) error {
	if err := os.Remove(d.path(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// storedUploads keeps upload files in the object store under uploads/<id>; a job copies
// one to its node's scratch space to transcribe it.
type storedUploads struct {
	storage providers.Storage
	tempDir string
}

func uploadKey(id string) string { return "uploads/" + id }

func (s storedUploads) keep(ctx context.Context, id, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	defer f.Close()
	return s.storage.Put(ctx, uploadKey(id), f, size, "application/octet-stream")
}

func (s storedUploads) exists(ctx context.Context, id string) error {
	obj, err := s.storage.Get(ctx, uploadKey(id))
	if errors.Is(err, providers.ErrNotFound) {
		return fileGone(id)
	}
	if err != nil {
		return fmt.Errorf("looking for the file of %s: %w", uploadRef(id), err)
	}
	obj.Body.Close()
	return nil
}

func (s storedUploads) local(ctx context.Context, id string) (string, func(), error) {
	obj, err := s.storage.Get(ctx, uploadKey(id))
	if errors.Is(err, providers.ErrNotFound) {
		return "", nil, fileGone(id)
	}
	if err != nil {
		return "", nil, fmt.Errorf("fetching the file of %s: %w", uploadRef(id), err)
	}
	defer obj.Body.Close()
	f, err := os.CreateTemp(s.tempDir, "upload-fetched-*")
	if err != nil {
		return "", nil, err
	}
	done := func() { os.Remove(f.Name()) }
	_, err = io.Copy(f, obj.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		done()
		return "", nil, fmt.Errorf("fetching the file of %s: %w", uploadRef(id), err)
	}
	return f.Name(), done, nil
}

func (s storedUploads) remove(ctx context.Context, id string) error {
	if err := s.storage.Delete(ctx, uploadKey(id)); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return err
	}
	return nil
}
