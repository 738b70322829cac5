package storage

import (
	"context"

	"parla/providers"
)

// The storages' optional capabilities (providers.go).
var (
	_ providers.KeyLister      = (*Disk)(nil)
	_ providers.KeyLister      = (*MinIO)(nil)
	_ providers.StorageChecker = (*Disk)(nil)
	_ providers.StorageChecker = (*MinIO)(nil)
)

// Keys lists the keys under prefix (List's, without sizes and times): what the order
// book's sweep and deletions need, through an interface of its own.
func (d *Disk) Keys(ctx context.Context, prefix string) ([]string, error) {
	return keys(d.List(ctx, prefix))
}

// Keys lists the keys under prefix, as Disk.Keys.
func (m *MinIO) Keys(ctx context.Context, prefix string) ([]string, error) {
	return keys(m.List(ctx, prefix))
}

func keys(entries []Entry, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Key
	}
	return out, nil
}
