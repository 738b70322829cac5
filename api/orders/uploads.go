package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Upload is an audio file a visitor sent for transcription. The file lives in the book's
// upload directory under its ID; the visitor's own file name is kept for display only.
type Upload struct {
	ID        string
	FileName  string
	Size      int64
	Duration  time.Duration
	OrderID   string // the order that last took it to checkout
	CreatedAt time.Time
}

// CreateUpload records an accepted upload.
func (s *Store) CreateUpload(ctx context.Context, u Upload) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO uploads (id, file_name, size, duration_ms, created_at)
		VALUES (?, ?, ?, ?, ?)`, u.ID, u.FileName, u.Size, u.Duration.Milliseconds(), millis(u.CreatedAt))
	if err != nil {
		return fmt.Errorf("recording upload %s: %w", u.ID, err)
	}
	return nil
}

const uploadColumns = `id, file_name, size, duration_ms, order_id, created_at`

func scanUpload(row interface{ Scan(...any) error }) (Upload, error) {
	var u Upload
	var ms, created int64
	err := row.Scan(&u.ID, &u.FileName, &u.Size, &ms, &u.OrderID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrUploadNotFound
	}
	u.Duration = time.Duration(ms) * time.Millisecond
	u.CreatedAt = fromMillis(created)
	return u, err
}

// GetUpload loads an upload by id.
func (s *Store) GetUpload(ctx context.Context, id string) (Upload, error) {
	u, err := scanUpload(s.db.QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads WHERE id = ?`, id))
	if err != nil {
		return u, fmt.Errorf("loading upload: %w", err)
	}
	return u, nil
}

// heldByNoPaidOrder is true for an upload no order holds, or whose order is unpaid
// (awaiting payment, or expired without payment); its arguments are AwaitingPayment, Expired.
const heldByNoPaidOrder = `(order_id = ''
	OR order_id IN (SELECT id FROM orders WHERE status = ? OR (status = ? AND paid_at = 0))
	OR order_id NOT IN (SELECT id FROM orders))`

// ClaimUpload binds an upload to a new order unless an order that has been paid holds it
// already; it reports false in that case.
func (s *Store) ClaimUpload(ctx context.Context, id, orderID string) (bool, error) {
	return s.exec(ctx, "claiming upload "+id,
		`UPDATE uploads SET order_id = ? WHERE id = ? AND `+heldByNoPaidOrder,
		orderID, id, AwaitingPayment, Expired)
}

// DeleteUpload forgets an upload.
func (s *Store) DeleteUpload(ctx context.Context, id string) error {
	_, err := s.exec(ctx, "deleting upload "+id, `DELETE FROM uploads WHERE id = ?`, id)
	return err
}

// StaleUploads lists uploads older than the cutoff that no paid order holds.
func (s *Store) StaleUploads(ctx context.Context, before time.Time) ([]Upload, error) {
	return queryAll(ctx, s.db, scanUpload, `SELECT `+uploadColumns+` FROM uploads
		WHERE created_at < ? AND `+heldByNoPaidOrder,
		millis(before), AwaitingPayment, Expired)
}
