package orders

import (
	"context"
	"fmt"
	"parla/providers/sqldb"
	"strings"
	"time"
)

// The SQL of the admin area (operator.go): the search, the audit log and the few
// transitions only an operator makes. Portable between SQLite and Postgres: ? placeholders,
// BIGINT unix milliseconds, ids made in Go.

// Filter names a group of states in the admin area's order list.
type Filter string

// The admin area's filters. Stuck is an order processing longer than the job timeout, or
// failed with its refund sent to the payment provider longer ago than that, fate unknown
// (the reconciler never sends it again blindly: the provider's dashboard tells);
// unmailed, an ended order (done, or refunded) whose letter is not known sent: in doubt,
// refused for good, or waiting to be sent again (letter.go).
const (
	FilterAll       Filter = ""
	FilterWaiting   Filter = "waiting"
	FilterStuck     Filter = "stuck"
	FilterFailed    Filter = "failed"
	FilterRefunded  Filter = "refunded"
	FilterDelivered Filter = "delivered"
	FilterUnmailed  Filter = "unmailed"
)

// Filters are the filters in the order the admin area offers them.
var Filters = []Filter{FilterWaiting, FilterStuck, FilterFailed, FilterRefunded, FilterDelivered, FilterUnmailed}

// Search is what the operator asks for: a text (order id, checkout session id, payment id or
// e-mail address) and/or a service and a filter.
type Search struct {
	Query   string
	Service Service
	Filter  Filter
	Limit   int // at most MaxSearch; 0 = 50
}

// MaxSearch caps how many orders one search lists.
const MaxSearch = 200

// searchSQL builds the WHERE clause and arguments of a search. It is pure: stuck orders
// are those processing and paid, or failed and their refund sent, before now − jobTimeout.
func searchSQL(s Search, now time.Time, jobTimeout time.Duration) (string, []any, error) {
	var where []string
	var args []any
	if q := strings.TrimSpace(s.Query); q != "" {
		// Each alternative is an indexed equality, so this stays a few index lookups at any size.
		where = append(where, `(id = ? OR session_id = ? OR payment_intent = ? OR email = ?)`)
		args = append(args, q, q, q, q)
	}
	if s.Service != "" {
		if !s.Service.Valid() {
			return "", nil, fmt.Errorf("unknown service %q", s.Service)
		}
		where = append(where, `service = ?`)
		args = append(args, s.Service)
	}
	switch s.Filter {
	case FilterAll:
	case FilterWaiting:
		where = append(where, `status IN (?, ?)`)
		args = append(args, AwaitingPayment, Paid)
	case FilterStuck:
		cutoff := millis(now.Add(-jobTimeout))
		where = append(where, `(status = ? AND paid_at != 0 AND paid_at < ? OR status IN (?, ?, ?) AND refund_sent_at != 0 AND refund_sent_at < ?)`)
		args = append(args, Processing, cutoff, Failed, Done, Expired, cutoff)
	case FilterFailed:
		where = append(where, `status = ?`)
		args = append(args, Failed)
	case FilterRefunded:
		where = append(where, `status = ?`)
		args = append(args, Refunded)
	case FilterDelivered:
		where = append(where, `status = ?`)
		args = append(args, Done)
	case FilterUnmailed:
		where = append(where, `status IN (?, ?) AND mailed_at = 0 AND email != ''`)
		args = append(args, Done, Refunded)
	default:
		return "", nil, fmt.Errorf("unknown filter %q", s.Filter)
	}
	if len(where) == 0 {
		return "", args, nil
	}
	return " WHERE " + strings.Join(where, " AND "), args, nil
}

// search lists the orders matching s, newest first.
func (s *Store) search(ctx context.Context, q Search, now time.Time, jobTimeout time.Duration) ([]Order, error) {
	where, args, err := searchSQL(q, now, jobTimeout)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, MaxSearch)
	return sqldb.QueryAll(ctx, s.db, scanOrder, `SELECT `+orderColumns+` FROM orders`+where+
		fmt.Sprintf(` ORDER BY created_at DESC LIMIT %d`, limit), args...)
}

// retryFailed moves a failed order back to paid, clearing its error and counting its
// runs afresh, so that its fulfilment runs again; it takes a claim, which fences off a
// refund of it that was frozen (claimRefund). It reports false when the order was no
// longer failed, its refund went out, or it was erased (no run may claim an erased order, so
// a retried one would stay paid for good).
func (s *Store) retryFailed(ctx context.Context, id string) (bool, error) {
	return s.db.Changed(ctx, "retrying order "+id,
		`UPDATE orders SET status = ?, error = '', progress = 0, claim = claim + 1, runs = 0
		 WHERE id = ? AND status = ? AND refund_sent_at = 0 AND erased = 0`, Paid, id, Failed)
}

// refundDelivered records the refund of a delivered order, its link live or lapsed (the
// money was returned by the operator's action); the result stays until its link lapses.
func (s *Store) refundDelivered(ctx context.Context, id, reason string) (bool, error) {
	return s.db.Changed(ctx, "refunding delivered order "+id,
		`UPDATE orders SET status = ?, error = ?, params = '{}', email = ''
		 WHERE id = ? AND (status = ? OR (status = ? AND paid_at != 0))`,
		Refunded, reason, id, Done, Expired)
}

// markDeliveredRefundSent records that the operator's refund of a delivered order goes to
// the payment provider now (refund_sent_at, kept from an earlier try): were its answer lost,
// the order would stay delivered with its payment maybe refunded, and the stuck list shows
// it. False when the order is no longer delivered.
func (s *Store) markDeliveredRefundSent(ctx context.Context, id string, at time.Time) (bool, error) {
	return s.db.Changed(ctx, "recording the refund of delivered order "+id,
		`UPDATE orders SET refund_sent_at = CASE WHEN refund_sent_at = 0 THEN ? ELSE refund_sent_at END
		 WHERE id = ? AND status IN (?, ?)`, millis(at), id, Done, Expired)
}

// clearDeliveredRefundSent takes the mark back when the provider certainly refused the
// refund (providers.ErrNotRefunded, under the order's one idempotency key).
func (s *Store) clearDeliveredRefundSent(ctx context.Context, id string) error {
	return s.db.Update(ctx, "taking back the refund mark of delivered order "+id,
		`UPDATE orders SET refund_sent_at = 0 WHERE id = ? AND status IN (?, ?)`, id, Done, Expired)
}

// extendLink moves a link's expiry from one value to another; false when it changed meanwhile
// or the result is gone.
func (s *Store) extendLink(ctx context.Context, id string, from, to time.Time) (bool, error) {
	return s.db.Changed(ctx, "extending the link of order "+id,
		`UPDATE orders SET link_expires_at = ? WHERE id = ? AND link_expires_at = ? AND result_key != ''`,
		millis(to), id, millis(from))
}

// AuditEntry is one operator action as the audit log keeps it.
type AuditEntry struct {
	ID      string
	Actor   string // "password" (a signed-in session) or "token" (a script)
	IP      string
	Action  string // sign_in, resend, retry, refund, extend
	OrderID string
	Detail  string
	Result  string // "started", "ok: …", "refused: …", "error: …"
	At      time.Time
}

// auditRows keep the admin area's audit log.
type auditRows struct {
	db *sqldb.DB
}

const auditColumns = `id, actor, ip, action, order_id, detail, result, at`

func scanAudit(row sqldb.Scanner) (AuditEntry, error) {
	var e AuditEntry
	var at int64
	err := row.Scan(&e.ID, &e.Actor, &e.IP, &e.Action, &e.OrderID, &e.Detail, &e.Result, &at)
	e.At = fromMillis(at)
	return e, err
}

// begin records an action about to run under its once key; false when that key was used
// before (the same form sent twice), in which case nothing is written.
func (a *auditRows) begin(ctx context.Context, once string, e AuditEntry) (bool, error) {
	return a.db.Changed(ctx, "recording "+e.Action,
		`INSERT INTO admin_audit (id, once_key, actor, ip, action, order_id, detail, result, at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (once_key) DO NOTHING`,
		e.ID, once, e.Actor, e.IP, e.Action, e.OrderID, e.Detail, e.Result, millis(e.At))
}

// finish records how an action ended.
func (a *auditRows) finish(ctx context.Context, id, result string) error {
	return a.db.Update(ctx, "recording the result of action "+id,
		`UPDATE admin_audit SET result = ? WHERE id = ?`, result, id)
}

// byOnce is the entry written under a once key.
func (a *auditRows) byOnce(ctx context.Context, once string) (AuditEntry, error) {
	e, err := scanAudit(a.db.QueryRowContext(ctx, `SELECT `+auditColumns+` FROM admin_audit WHERE once_key = ?`, once))
	if err != nil {
		return e, fmt.Errorf("loading action: %w", err)
	}
	return e, nil
}

// list is the newest entries, of one order when orderID is set.
func (a *auditRows) list(ctx context.Context, orderID string, limit int) ([]AuditEntry, error) {
	if orderID != "" {
		return sqldb.QueryAll(ctx, a.db, scanAudit, `SELECT `+auditColumns+` FROM admin_audit
			WHERE order_id = ? ORDER BY at DESC, id DESC LIMIT ?`, orderID, limit)
	}
	return sqldb.QueryAll(ctx, a.db, scanAudit, `SELECT `+auditColumns+` FROM admin_audit
		ORDER BY at DESC, id DESC LIMIT ?`, limit)
}
