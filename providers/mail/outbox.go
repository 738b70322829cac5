package mail

import (
	"context"
	"fmt"
	netmail "net/mail"
	"os"
	"path/filepath"
	"time"

	"parla/providers"
)

// Outbox "sends" messages by writing each one as an RFC 5322 .eml file into a directory:
// the default when no SMTP server is configured, so a fresh install can read its mail.
type Outbox struct {
	dir  string
	from *netmail.Address
}

var _ providers.Mailer = (*Outbox)(nil)

// NewOutbox creates dir if needed (mode 0700: the files hold addresses and links) and
// returns an outbox that writes there with DefaultFrom as the sender.
func NewOutbox(dir string) (*Outbox, error) {
	if dir == "" {
		return nil, fmt.Errorf("outbox: no directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	from, err := parseFrom(DefaultFrom)
	if err != nil {
		return nil, fmt.Errorf("outbox: from: %w", err)
	}
	return &Outbox{dir: dir, from: from}, nil
}

// Dir is the directory the outbox writes to.
func (o *Outbox) Dir() string { return o.dir }

// Send writes m to a new file named <UTC timestamp>-<random>.eml, so names sort by time and
// never collide, or <ID>.eml for a message with an ID, which is written once: sending it
// again is a no-op. The file appears whole or not at all (written aside, then renamed), so
// every error wraps providers.ErrNotSent: a message whose file is not in place did not leave.
func (o *Outbox) Send(ctx context.Context, m providers.Message) error {
	if err := o.write(ctx, m); err != nil {
		return fmt.Errorf("outbox: %w (%w)", err, providers.ErrNotSent)
	}
	return nil
}

// write puts m's file in place, whole, or leaves none.
func (o *Outbox) write(ctx context.Context, m providers.Message) error {
	now := time.Now().UTC()
	msg, err := newMsg(o.from, m, now)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	suffix, err := randomHex(6)
	if err != nil {
		return err
	}
	// Fixed-width nanoseconds keep lexical order equal to time order.
	name := now.Format("20060102T150405.000000000Z") + "-" + suffix + ".eml"
	if id := safeID(m.ID); id != "" {
		name = id + ".eml"
		if _, err := os.Stat(filepath.Join(o.dir, name)); err == nil {
			return nil // sent already (a retry after a crash)
		}
	}

	tmp, err := os.CreateTemp(o.dir, ".tmp-*.eml.part")
	if err != nil {
		return fmt.Errorf("creating temporary file: %w", err)
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := msg.WriteTo(tmp); err != nil {
		return fmt.Errorf("writing message: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("syncing message: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing message: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(o.dir, name)); err != nil {
		os.Remove(tmp.Name())
		tmp = nil
		return fmt.Errorf("renaming message into place: %w", err)
	}
	tmp = nil
	return nil
}
