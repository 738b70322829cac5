package orders

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"parla/providers/sqldb"
)

// ErrUploadNotFound is returned (wrapped) for an unknown, swept or already paid upload.
var ErrUploadNotFound = errors.New("upload not found")

// Upload is an audio file a visitor sent for transcription. The file lives under its ID in
// the upload directory or the object store (uploadfiles.go); the visitor's own file name
// is kept for display only.
type Upload struct {
	ID        string
	FileName  string
	Size      int64
	Duration  time.Duration
	Speech    time.Duration // measured when it was accepted; not stored (0 when read back)
	OrderID   string        // the order that last took it to checkout
	CreatedAt time.Time
}

// Uploads keeps visitors' audio files: one file per upload id (uploadFiles), and a row
// each in the uploads table. Nothing else touches either.
type Uploads struct {
	files   uploadFiles
	quota   uploadQuota
	tempDir string
	db      *sqldb.DB
	now     func() time.Time
	log     *slog.Logger
}

// Incoming creates the scratch file an upload is streamed into. Hand it to
// Intake.AcceptUpload, or remove it.
func (u *Uploads) Incoming() (*os.File, error) {
	f, err := os.CreateTemp(u.tempDir, "upload-*")
	if err != nil {
		return nil, fmt.Errorf("creating upload file: %w", err)
	}
	return f, nil
}

// uploadRef names an upload in logs and errors without giving its id away: the id is what
// lets a visitor order the file's transcription, and logs are read by more people.
func uploadRef(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "upload#" + hex.EncodeToString(sum[:4])
}

// keep moves the checked file at path under a new upload id and records it as client's,
// within the quotas (quota.go).
func (u *Uploads) keep(ctx context.Context, path, fileName, client string, size int64, d time.Duration) (Upload, error) {
	settle, err := u.reserve(ctx, client, size)
	if err != nil {
		return Upload{}, err
	}
	up := Upload{ID: randomString(18), FileName: displayName(fileName), Size: size, Duration: d, CreatedAt: u.now()}
	if err := u.files.keep(ctx, up.ID, path, size); err != nil {
		settle(nil)
		return Upload{}, fmt.Errorf("keeping upload: %w", err)
	}
	err = settle(func() error {
		_, err := u.db.ExecContext(ctx, `INSERT INTO uploads (id, file_name, size, duration_ms, created_at, client)
			VALUES (?, ?, ?, ?, ?, ?)`, up.ID, up.FileName, up.Size, keptMillis(up.Duration), millis(up.CreatedAt), client)
		return err
	})
	if err != nil {
		u.files.remove(context.WithoutCancel(ctx), up.ID)
		return Upload{}, fmt.Errorf("recording %s: %w", uploadRef(up.ID), err)
	}
	return up, nil
}

// keptMillis is an upload's duration as the uploads table keeps it, in milliseconds
// rounded up: whole seconds rounded up (Seconds, what the price counts) come out the same
// from it as from the measure itself, so the checkout charges what the upload was quoted.
// Cut to milliseconds, 100.0000625 s was quoted for 101 s and charged for 100.
func keptMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

const uploadColumns = `id, file_name, size, duration_ms, order_id, created_at`

func scanUpload(row sqldb.Scanner) (Upload, error) {
	var up Upload
	var ms, created int64
	err := row.Scan(&up.ID, &up.FileName, &up.Size, &ms, &up.OrderID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return up, ErrUploadNotFound
	}
	up.Duration = time.Duration(ms) * time.Millisecond
	up.CreatedAt = fromMillis(created)
	return up, err
}

// row loads an upload's record.
func (u *Uploads) row(ctx context.Context, id string) (Upload, error) {
	up, err := scanUpload(u.db.QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads WHERE id = ?`, id))
	if err != nil {
		return up, fmt.Errorf("loading upload: %w", err)
	}
	return up, nil
}

// get loads an upload whose file is still there.
func (u *Uploads) get(ctx context.Context, id string) (Upload, error) {
	up, err := u.row(ctx, id)
	if err != nil {
		return up, err
	}
	return up, u.files.exists(ctx, up.ID)
}

// file returns a local path and the measured duration of an upload, for its
// transcription; call done when finished with the path.
func (u *Uploads) file(ctx context.Context, id string) (path string, d time.Duration, done func(), err error) {
	up, err := u.row(ctx, id)
	if err != nil {
		return "", 0, nil, err
	}
	path, done, err = u.files.local(ctx, up.ID)
	return path, up.Duration, done, err
}

// heldByNoPaidOrder is true for an upload no order holds, or whose order is unpaid
// (awaiting payment, or expired without payment); its arguments are AwaitingPayment, Expired.
const heldByNoPaidOrder = `(order_id = ''
	OR order_id IN (SELECT id FROM orders WHERE status = ? OR (status = ? AND paid_at = 0))
	OR order_id NOT IN (SELECT id FROM orders))`

// claim binds an upload to a new order unless an order that has been paid holds it
// already; it reports false in that case.
func (u *Uploads) claim(ctx context.Context, id, orderID string) (bool, error) {
	return u.db.Changed(ctx, "claiming "+uploadRef(id),
		`UPDATE uploads SET order_id = ? WHERE id = ? AND `+heldByNoPaidOrder,
		orderID, id, AwaitingPayment, Expired)
}

// claimPaid makes a just-paid order the upload's holder unless another paid order holds
// it; it reports false in that case (two checkouts of one file, both paid).
func (u *Uploads) claimPaid(ctx context.Context, id, orderID string) (bool, error) {
	return u.db.Changed(ctx, "claiming "+uploadRef(id)+" for a payment",
		`UPDATE uploads SET order_id = ? WHERE id = ? AND (order_id = ? OR `+heldByNoPaidOrder+`)`,
		orderID, id, orderID, AwaitingPayment, Expired)
}

// release deletes an upload once the job of the order holding it has ended; an order
// that does not hold it (a second payment for the same file, refunded) leaves it alone.
func (u *Uploads) release(ctx context.Context, id, orderID string) {
	up, err := u.row(ctx, id)
	if err != nil || up.OrderID != orderID {
		return
	}
	u.delete(ctx, id)
}

// delete removes an upload's file and row; failures are logged, and the sweeper tries again.
func (u *Uploads) delete(ctx context.Context, id string) bool {
	if err := u.files.remove(ctx, id); err != nil {
		u.log.Warn("deleting upload", "upload", uploadRef(id), "err", err)
		return false
	}
	if err := u.db.Update(ctx, "deleting "+uploadRef(id), `DELETE FROM uploads WHERE id = ?`, id); err != nil {
		u.log.Warn("forgetting upload", "upload", uploadRef(id), "err", err)
		return false
	}
	return true
}

// sweep deletes uploads older than the cutoff that no paid order holds.
func (u *Uploads) sweep(ctx context.Context, cutoff time.Time) (int, error) {
	stale, err := sqldb.QueryAll(ctx, u.db, scanUpload, `SELECT `+uploadColumns+` FROM uploads
		WHERE created_at < ? AND `+heldByNoPaidOrder, millis(cutoff), AwaitingPayment, Expired)
	return u.deleteAll(ctx, stale, err)
}

// sweepIdle deletes, whatever their age, the unpaid uploads no open checkout holds (never
// taken to one, or its order expired unpaid): what the sweep frees first when the disk is
// short. One awaiting payment is left, since its visitor may be paying now.
func (u *Uploads) sweepIdle(ctx context.Context) (int, error) {
	idle, err := sqldb.QueryAll(ctx, u.db, scanUpload, `SELECT `+uploadColumns+` FROM uploads
		WHERE order_id = '' OR order_id IN (SELECT id FROM orders WHERE status = ? AND paid_at = 0)
		OR order_id NOT IN (SELECT id FROM orders)`, Expired)
	return u.deleteAll(ctx, idle, err)
}

// deleteAll deletes the listed uploads (err: the listing's), counting those deleted.
func (u *Uploads) deleteAll(ctx context.Context, stale []Upload, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n := 0
	for _, up := range stale {
		if u.delete(ctx, up.ID) {
			n++
		}
	}
	return n, nil
}
