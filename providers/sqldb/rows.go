package sqldb

import (
	"context"
	"fmt"
	"time"
)

// Changed runs an update and reports whether it changed a row; what names it in errors.
func (db *DB) Changed(ctx context.Context, what, q string, args ...any) (bool, error) {
	res, err := db.ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n > 0, nil
}

// Update runs an update whose row count does not matter; what names it in errors.
func (db *DB) Update(ctx context.Context, what, q string, args ...any) error {
	_, err := db.Changed(ctx, what, q, args...)
	return err
}

// Scanner is a *Row or *sql.Rows.
type Scanner interface{ Scan(...any) error }

// QueryAll runs a query and scans every row with scan.
func QueryAll[T any](ctx context.Context, db *DB, scan func(Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing: %w", err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("listing: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Millis is a time as the tables keep it: unix milliseconds, 0 for the zero time.
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMillis reads a time kept by Millis.
func FromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
