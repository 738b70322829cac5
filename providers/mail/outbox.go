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
		return nil, fmt.Errorf("outbox: creating %s: %w", dir, err)
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
// again is a no-op. The file appears whole or not at all (written aside, then renamed).
func (o *Outbox) Send(ctx context.Context, m providers.Message) error {
	now := time.Now().UTC()
	msg, err := newMsg(o.from, m, now)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	suffix, err := randomHex(6)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
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
		return fmt.Errorf("outbox: creating temporary file: %w", err)
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := msg.WriteTo(tmp); err != nil {
		return fmt.Errorf("outbox: writing message: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("outbox: syncing message: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("outbox: closing message: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(o.dir, name)); err != nil {
		os.Remove(tmp.Name())
		tmp = nil
		return fmt.Errorf("outbox: renaming message into place: %w", err)
	}
	tmp = nil
	return nil
}
