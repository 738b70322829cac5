package orders

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
)

// uploadQuota bounds the unpaid uploads kept (those no paid order holds, see
// heldByNoPaidOrder): at most perClient bytes per client address and total bytes in all;
// 0 leaves a bound off. Unpaid work costs the visitor nothing, so without it one address
// could fill the disk with files it never means to pay for, kept UploadTTL each.
//
// The bytes counted are the kept uploads' (the database) plus those this node is keeping
// right now (pending), so that uploads arriving at once cannot all pass one check. Nodes
// of a cluster do not see each other's pending bytes: at once, each may let one more
// through.
type uploadQuota struct {
	perClient, total int64

	mu           sync.Mutex
	pending      map[string]int64 // bytes being kept now, per client
	pendingTotal int64
}

// usage reads the bytes of unpaid uploads kept in all and from client.
func (u *Uploads) usage(ctx context.Context, client string) (total, mine int64, err error) {
	err = u.db.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN client = ? THEN size ELSE 0 END), 0) AS BIGINT)
		FROM uploads WHERE `+heldByNoPaidOrder, client, AwaitingPayment, Expired).Scan(&total, &mine)
	if err != nil {
		return 0, 0, fmt.Errorf("counting unpaid uploads: %w", err)
	}
	return total, mine, nil
}

// reserve holds size bytes of the quotas for an upload of client's being kept, or refuses
// it (upload_quota: the client's own bound; uploads_full: everyone's). settle ends the
// hold, running record (the upload's row; nil when it is given up) under the quota's lock,
// so that no other upload sees its bytes twice (kept and held) or not at all.
func (u *Uploads) reserve(ctx context.Context, client string, size int64) (settle func(record func() error) error, err error) {
	q := &u.quota
	if q.perClient <= 0 && q.total <= 0 {
		return func(record func() error) error {
			if record == nil {
				return nil
			}
			return record()
		}, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := u.checkLocked(ctx, client, size); err != nil {
		return nil, err
	}
	if q.pending == nil {
		q.pending = map[string]int64{}
	}
	q.pending[client] += size
	q.pendingTotal += size
	return func(record func() error) (err error) {
		q.mu.Lock()
		defer q.mu.Unlock()
		if record != nil {
			err = record()
		}
		q.pendingTotal -= size
		if q.pending[client] -= size; q.pending[client] <= 0 {
			delete(q.pending, client)
		}
		return err
	}, nil
}

// hold counts size bytes of client's in the quotas while the upload is measured (a measure
// may take seconds, and uploads arriving meanwhile must see these bytes), or refuses it
// as fits would. release ends the hold (safe to call more than once); keep then reserves
// the bytes again, checking the quotas once more, so nothing passes them in between.
func (u *Uploads) hold(ctx context.Context, client string, size int64) (release func(), err error) {
	settle, err := u.reserve(ctx, client, size)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { settle(nil) }) }, nil
}

// checkLocked judges size more bytes of client's against what is kept and being kept;
// the caller holds the quota's lock.
func (u *Uploads) checkLocked(ctx context.Context, client string, size int64) error {
	q := &u.quota
	total, mine, err := u.usage(ctx, client)
	if err != nil {
		return err
	}
	return q.judge(total+q.pendingTotal+size, mine+q.pending[client]+size)
}

// judge refuses bytes past a quota: the client's own first, the more precise answer.
func (q *uploadQuota) judge(total, mine int64) error {
	if q.perClient > 0 && mine > q.perClient {
		return bad("upload_quota", "this address has reached its quota of unpaid uploads (%d MB): order one of them, or try again once they expire", q.perClient/1e6)
	}
	if q.total > 0 && total > q.total {
		return bad("uploads_full", "we keep too many unpaid uploads right now; try again later")
	}
	return nil
}

// fits says whether size more bytes of client's fit in the quotas now, holding nothing
// (a hold, even for a moment, would make an upload being kept at once look over quota).
func (u *Uploads) fits(ctx context.Context, client string, size int64) error {
	q := &u.quota
	if q.perClient <= 0 && q.total <= 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return u.checkLocked(ctx, client, size)
}

// ClientKey is what a client's address is counted under by every limit on visitors: the
// upload quotas, the rate limits' buckets (previews, quotes, analyses, checkouts, session
// lookups, the editor), the render bucket, the connection cap per address and the admin
// area's limits on failed sign-ins. One client is an IPv4 address as it is, or an IPv6 /64,
// the block one subscriber's host may pick any address from. Anything else stays as given,
// and a key given again is itself (ClientKey(ClientKey(ip)) == ClientKey(ip)).
func ClientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a = a.Unmap(); a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}
